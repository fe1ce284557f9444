//! The program's persistent state: the values of its globals (module
//! variables, SAVE locals, DATA-initialised variables) between calls.
//!
//! Every handle made from one [`super::Engine`] (the primal procedure, its
//! tangents and adjoints, on the JIT or the interpreter) runs against one
//! [`GlobalStore`]: derivative modules extend the program's store with their
//! own tangent or adjoint globals, so a module variable is one memory for all
//! of them, as in a linked Fortran program. A [`GlobalState`] is a copy of
//! the program's globals; the derivative evaluations take one before they
//! start, restore it before every sweep and finite-difference point, and
//! leave behind the state one primal call would (see `derivatives`).

use super::{Error, ErrorKind};
use adjit_jit::globals::{GlobalStore, GlobalsGuard};
use adjit_jit::ir::GlobalId;
use adjit_jit::Buffer;

/// A copy of the values of a program's globals, in module order, taken by
/// [`super::Engine::state`] and put back by [`super::Engine::set_state`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlobalState {
    values: Vec<(String, Buffer)>,
}

impl GlobalState {
    /// The value of the global named `name` (`module::var` for a module
    /// variable, `proc::var` for a SAVE local; case as lowered, lower case).
    pub fn get(&self, name: &str) -> Option<&Buffer> {
        let name = name.to_ascii_lowercase();
        self.values
            .iter()
            .find(|(n, _)| n.to_ascii_lowercase() == name)
            .map(|(_, b)| b)
    }

    /// The globals' names and values, in module order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Buffer)> {
        self.values.iter().map(|(n, b)| (n.as_str(), b))
    }

    /// Number of globals.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the program has no globals.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Copies the first `count` globals of a locked store.
    pub(crate) fn take(guard: &GlobalsGuard<'_>, count: usize) -> GlobalState {
        let globals = guard.store().globals();
        GlobalState {
            values: (0..count.min(globals.len()))
                .filter_map(|i| {
                    let b = guard.get(GlobalId(i as u32))?;
                    Some((globals[i].name.clone(), b))
                })
                .collect(),
        }
    }

    /// Writes the values back into a locked store of the same program.
    pub(crate) fn put(&self, guard: &mut GlobalsGuard<'_>) -> Result<(), Error> {
        let mismatch = |detail: String| {
            Error::new(
                ErrorKind::Usage,
                format!("the global state does not belong to this program: {detail}"),
            )
        };
        let globals = guard.store().globals();
        for (i, (name, _)) in self.values.iter().enumerate() {
            match globals.get(i) {
                Some(g) if g.name == *name => {}
                _ => return Err(mismatch(format!("no global `{name}` at position {i}"))),
            }
        }
        for (i, (_, value)) in self.values.iter().enumerate() {
            guard.set(GlobalId(i as u32), value).map_err(mismatch)?;
        }
        Ok(())
    }
}

/// Where a derivative or primal call starts from and what it leaves.
#[derive(Clone, Copy, Default)]
pub(crate) struct Evaluation<'s> {
    /// Restore the program's globals to this state first (`None`: start
    /// from the current state).
    pub(crate) from: Option<&'s GlobalState>,
    /// Take a copy of the program's globals after the call.
    pub(crate) snapshot: bool,
    /// Put the program's globals to this state after the call.
    pub(crate) leave: Option<&'s GlobalState>,
}

/// Prepares a locked store for a call: the program's first `shared`
/// globals from `from` (when given), the module's own derivative globals
/// (tangents, adjoints) zero.
pub(crate) fn prepare(
    guard: &mut GlobalsGuard<'_>,
    shared: usize,
    from: Option<&GlobalState>,
) -> Result<(), Error> {
    if let Some(state) = from {
        state.put(guard)?;
    }
    for i in shared..guard.store().len() {
        guard.clear(GlobalId(i as u32));
    }
    Ok(())
}

/// Finishes a call on a locked store: the snapshot and the state to leave
/// that `how` asks for.
pub(crate) fn finish(
    guard: &mut GlobalsGuard<'_>,
    shared: usize,
    how: Evaluation<'_>,
) -> Result<Option<GlobalState>, Error> {
    let end = how.snapshot.then(|| GlobalState::take(guard, shared));
    if let Some(state) = how.leave {
        state.put(guard)?;
    }
    Ok(end)
}

/// The program's store for `module`'s globals: a fresh one for the program
/// itself, an extension for a derivative module.
pub(crate) fn store_for(
    root: &GlobalStore,
    globals: &[adjit_jit::ir::Global],
) -> Result<GlobalStore, Error> {
    root.extend(globals).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("derivative module globals do not extend the program's: {e}"),
        )
    })
}
