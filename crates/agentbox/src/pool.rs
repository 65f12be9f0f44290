//! Warm gateways: a few sandboxes per template, booted ahead and healthy, handed to the next
//! start of that template in well under a second instead of the gateway's boot of tens of
//! seconds.
//!
//! A sandbox holds only placeholders of its credentials, so one booted for nobody works for
//! anybody: the pool boots it with its way out armed with nothing that works, and a start that
//! takes it arms it with the account's real credentials. A pooled sandbox reserves its memory
//! from the machine's budget like a running one, gives way to a start that needs the room, is
//! never billed, and is not recorded in the store: a restarted svc removes it with the other
//! sandboxes no gateway owns, and boots the pool again.
//!
//! Starts of accounts with a chat bot boot cold: the bot's groups are in the gateway's config.

use std::collections::HashMap;
use std::sync::Mutex;

/// How a driven gateway comes up.
pub(crate) enum Bring {
    /// Booted from nothing.
    Fresh,
    /// A warm gateway of the pool, armed with the account's credentials.
    Warm(Member),
    /// Already running: re-attached to after a restart.
    Attached,
}

/// A healthy gateway waiting for a start.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// Its sandbox's id: the gateway's id once taken.
    pub id: String,
    /// Its process on this machine.
    pub pid: Option<i64>,
}

/// The warm gateways of this process, by template.
#[derive(Default)]
pub(crate) struct Pool {
    ready: Mutex<HashMap<&'static str, Vec<Member>>>,
    /// Sandboxes booting for the pool, counted against the budget as members are.
    booting: Mutex<Vec<String>>,
}

impl Pool {
    pub(crate) fn ready(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, Vec<Member>>> {
        self.ready.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn booting(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.booting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a warm gateway of `template`, if there is one.
    pub(crate) fn take(&self, template: &str) -> Option<Member> {
        self.ready().get_mut(template)?.pop()
    }

    /// Puts back a member taken but not used.
    pub(crate) fn put_back(&self, template: &'static str, member: Member) {
        self.ready().entry(template).or_default().push(member);
    }

    /// Takes the warm gateway of whichever template has the most, to free its room.
    pub(crate) fn take_any(&self) -> Option<Member> {
        let mut ready = self.ready();
        let fullest = ready.iter_mut().max_by_key(|(_, members)| members.len())?;
        fullest.1.pop()
    }

    /// Warm gateways of `template`.
    pub(crate) fn warm(&self, template: &str) -> usize {
        self.ready().get(template).map_or(0, Vec::len)
    }

    /// Sandboxes the pool holds or is booting.
    pub(crate) fn held(&self) -> usize {
        self.ready().values().map(Vec::len).sum::<usize>() + self.booting().len()
    }
}
