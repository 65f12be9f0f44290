//! Where things are inside a sandbox, as the gateway in it sees them: its home, its ports and
//! the snapshot's mount. One place below the backends, the files a sandbox is given and the
//! snapshot, which all have to agree on them.

/// The port the gateway answers on inside its sandbox.
pub const GATEWAY_PORT: u16 = 18789;
/// The port inside the sandbox that reaches svc (its API and its LLM proxy).
pub const SVC_PORT: u16 = 18800;
/// The agent's home inside the sandbox.
pub const HOME: &str = "/home/agent";
/// Where the snapshot is mounted inside a sandbox.
pub const SNAPSHOT_MOUNT: &str = "/opt/agent";
