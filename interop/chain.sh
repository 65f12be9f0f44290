# Sourced by interop/run.sh and bench/settle.sh (from interop/): a local Hardhat chain with the
# EIP-3009 test token, svc's config to settle on it, and the helpers both scripts use.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 1 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "timed out: $*" >&2; return 1; }

# The local chain's public development accounts.
deployer_key=0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80
relayer_key=0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d
relayer=0x70997970C51812dc3A010C7d01b50e0d17dc79C8
relayer2_key=0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6
relayer2=0x90F79bf6EB2c4f870365E785982E1f101E93b906
pay_to=0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC
pay_to_key=0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a

# start_chain LOG CONFIG [MINT_TO]: starts a chain logging to LOG, deploys the token (minting to
# MINT_TO, default the recipient) and writes svc's [x402] config to CONFIG. Sets chain_pid, rpc
# and token.
start_chain() {
  local log=$1 config=$2 mint_to=${3:-$pay_to} port
  port="$(free_port)"
  # Run directly, not through npx, so that chain_pid is the node process itself and killing
  # it stops the chain.
  ./node_modules/.bin/hardhat --config hardhat.config.cjs node --port "$port" >"$log" 2>&1 &
  chain_pid=$!
  rpc="http://127.0.0.1:$port"
  wait_for curl -sf -X POST -H 'content-type: application/json' \
    --data '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "$rpc"
  # The node prints every call it serves; under load that printing costs it more than some
  # calls do, and it is none of a real node's work, so it is off (the log keeps the start-up).
  curl -sf -X POST -H 'content-type: application/json' \
    --data '{"jsonrpc":"2.0","id":1,"method":"hardhat_setLoggingEnabled","params":[false]}' "$rpc" >/dev/null
  token="$(RPC_URL="$rpc" DEPLOYER_KEY="$deployer_key" PAYER="$mint_to" node deploy.mjs |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
  cat >"$config" <<TOML
[x402]
solana = false

[[x402.networks]]
network = "eip155:31337"
asset = "$token"
name = "USD Coin"
version = "2"
pay_to = "$pay_to"
rpc_url = "$rpc"
TOML
}
