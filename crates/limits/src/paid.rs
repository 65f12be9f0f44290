//! Rate limits on calls paid per call (x402), where a 402 challenge holds the client's slot:
//! the paid retry of a challenge, sent within the challenge's 300 s, is never refused for rate.
//! An agent that was told what to pay and paid must get its answer, not a 429 for having asked
//! first.
//!
//! The payer a payment names is only a claim until the payment verifies. So a paid call is
//! counted against its wallet, and also needs its IP to be within its limit unless it uses a
//! held slot; when the payment is refused (junk, a forged signature, a replay) the wallet's
//! count is given back, a slot it used is held again, and the call counts against the IP like
//! any unpaid request (and against the IP's refused payments, which, once over the limit, may
//! not use held slots either). Only a challenge to an unpaid request, or to a verified payment
//! whose settlement failed, holds a slot.

use crate::{Decision, Limiter, MINUTE_MS};

/// How long a challenge holds its slot: its `maxTimeoutSeconds`.
pub const HOLD_MS: i64 = 300_000;

/// One paid call to be counted.
#[derive(Debug, Clone, Copy)]
pub struct PaidCall<'a> {
    /// The route called, whose challenges hold slots.
    pub route: &'a str,
    /// The bucket its calls count in.
    pub bucket: &'a str,
    /// Calls allowed per minute.
    pub limit: u32,
    /// The client's IP, as counters name it.
    pub ip: &'a str,
    /// The wallet the call's payment names (a claim until it verifies), if it has one.
    pub payer: Option<&'a str>,
}

/// What an x402 answer means for the slot a challenge holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// A challenge was issued (to an unpaid request, or after a verified payment's settlement
    /// failed): its paid retry gets a slot.
    Challenged,
    /// The payment was refused before it verified: the call was the IP's.
    Refused,
    /// Anything else.
    Other,
}

/// A call let in, with what [`Limiter::paid_served`] needs to settle its count.
#[derive(Debug)]
pub struct Admitted {
    /// The decision to report in the answer's rate headers.
    pub decision: Decision,
    hold_key: String,
    ip_key: String,
    junk_key: String,
    wallet_key: Option<String>,
    limit: u32,
    held: bool,
    wallet_counted: bool,
}

impl Limiter {
    /// Counts a paid call before it is served: an unpaid call counts against its IP; a paid
    /// one uses a slot its IP holds for this route, or else counts against the wallet its
    /// payment names. `Err` is the decision that refuses it.
    pub async fn paid_admit(&self, call: PaidCall<'_>, now: i64) -> Result<Admitted, Decision> {
        let PaidCall { route, bucket, limit, ip, payer } = call;
        let hold_key = format!("hold:{route}:{ip}");
        let ip_key = format!("rate:{bucket}:ip:{ip}");
        let junk_key = format!("rate:{bucket}:refused:{ip}");
        let wallet_key = payer.map(|payer| format!("rate:{bucket}:wallet:{payer}"));
        let (mut decision, held, wallet_counted) = match &wallet_key {
            Some(wallet_key) => {
                let by_ip = self.peek(&ip_key, limit, MINUTE_MS, now).await;
                let by_wallet = self.peek(wallet_key, limit, MINUTE_MS, now).await;
                let held = if by_ip.allowed && by_wallet.allowed {
                    false
                } else {
                    // Over a limit: only the retry of a challenge gets in, and not while this IP's
                    // refused payments are over the limit too (each would put its slot back).
                    let junk = self.peek(&junk_key, limit, MINUTE_MS, now).await;
                    if !junk.allowed {
                        return Err(junk);
                    }
                    self.take_hold(&hold_key, now).await
                };
                if !held && !by_ip.allowed {
                    return Err(by_ip);
                }
                // Counted either way; the retry of a challenge is admitted whatever the window says.
                let decision = self.hit(wallet_key, limit, MINUTE_MS, now).await;
                if !decision.allowed && !held {
                    return Err(decision);
                }
                (decision, held, decision.allowed)
            }
            None => {
                let decision = self.hit(&ip_key, limit, MINUTE_MS, now).await;
                if !decision.allowed {
                    return Err(decision);
                }
                (decision, false, false)
            }
        };
        decision.allowed = true;
        Ok(Admitted { decision, hold_key, ip_key, junk_key, wallet_key, limit, held, wallet_counted })
    }

    /// Settles an admitted call's count once it was `served`: a refused payment's call becomes
    /// the IP's, a challenge holds a slot, a payment that went through uses up its client's.
    /// Returns the decision for the answer's rate headers.
    pub async fn paid_served(&self, admitted: Admitted, served: Served, now: i64) -> Decision {
        let Admitted { mut decision, hold_key, ip_key, junk_key, wallet_key, limit, held, wallet_counted } = admitted;
        let refused_payment = served == Served::Refused;
        if let (Some(wallet_key), true) = (&wallet_key, refused_payment) {
            // The payer was never proven: the call was the IP's, not the wallet's.
            if wallet_counted {
                self.give_back(wallet_key, now).await;
            }
            if held {
                self.hold(&hold_key, now + HOLD_MS, now).await;
            }
            self.hit(&junk_key, limit, MINUTE_MS, now).await;
            decision = self.hit(&ip_key, limit, MINUTE_MS, now).await;
            decision.allowed = true;
        } else if refused_payment {
            // Junk in the payment header, no payer named: counted against the IP already.
        } else if served == Served::Challenged {
            self.hold(&hold_key, now + HOLD_MS, now).await;
        } else if wallet_key.is_some() && !held {
            // A payment that went through is the retry of this client's challenge, if it had
            // one: slots do not pile up to be spent later.
            self.take_hold(&hold_key, now).await;
        }
        decision
    }
}
