//! Panics. The release build has `panic = "abort"`: a panic traps (`unreachable`), the task host
//! reports a `RuntimeError`, and the pool replaces the worker. The hook installed here keeps the
//! panic's message (location and text) so that the error the page gets says what broke — e.g. an
//! arrow-rs assertion on a corrupt page — rather than only "unreachable".

use std::cell::RefCell;

thread_local! {
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once per instance, at start).
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        LAST.with(|last| {
            if let Ok(mut slot) = last.try_borrow_mut() {
                *slot = Some(message);
            }
        });
    }));
}

/// The last panic's message on this thread, taken.
pub fn take_message() -> Option<String> {
    LAST.with(|last| last.try_borrow_mut().ok().and_then(|mut slot| slot.take()))
}
