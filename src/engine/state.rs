//! The program's persistent state: the values of its globals (module
//! variables, SAVE locals, DATA-initialised variables) between calls.
//!
//! Every handle made from one [`super::Engine`] (the primal procedure, its
//! tangents and adjoints, on the JIT or the interpreter) runs against one
//! [`GlobalStore`]: derivative modules extend the program's store with their
//! own tangent or adjoint globals, so a module variable is one memory for all
//! of them, as in a linked Fortran program. A [`GlobalState`] is a copy of
//! the program's globals. An evaluation runs against its own copy of the
//! globals ([`Held`], a frame taken from the store when it starts and
//! written back into the store when it ends), so evaluations of one program
//! run on many threads at once; one after the other, each sees what the
//! previous one left. A derivative evaluation copies the globals its code
//! may write ([`written_globals`]) before it starts, restores them before
//! every further sweep and finite-difference point, and leaves behind the
//! state one primal call would (see `derivatives`).

use super::{Error, ErrorKind};
use adjit_ir::io::Kept;
use adjit_ir::Buffer;
use adjit_ir::{CallArg, CharBase, GlobalId, Inst, Module, ProcId, Storage, VarId};
use adjit_jit::globals::{GlobalAccess, GlobalFrame, GlobalStore};

/// A copy of the values of a program's globals, in module order, taken by
/// [`super::Engine::state`] and put back by [`super::Engine::set_state`].
/// (The evaluations keep copies of only the globals their code may write.)
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlobalState {
    values: Vec<(GlobalId, String, Buffer)>,
    /// A copy of the program's kept records (the ALLOCATABLE module and
    /// SAVE arrays kept between calls), when the state was taken from the
    /// program's store rather than from a copy of its globals.
    kept: Option<Kept>,
}

impl GlobalState {
    /// The value of the global named `name` (`module::var` for a module
    /// variable, `proc::var` for a SAVE local; case-insensitive).
    pub fn get(&self, name: &str) -> Option<&Buffer> {
        let name = name.to_ascii_lowercase();
        self.values
            .iter()
            .find(|(_, n, _)| n.to_ascii_lowercase() == name)
            .map(|(_, _, b)| b)
    }

    /// The globals' names and values, in module order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Buffer)> {
        self.values.iter().map(|(_, n, b)| (n.as_str(), b))
    }

    /// Number of globals.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the program has no globals.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Copies the globals `ids` of a locked store or a frame.
    pub(crate) fn take(guard: &impl GlobalAccess, ids: &[GlobalId]) -> GlobalState {
        let globals = guard.descriptors();
        GlobalState {
            values: ids
                .iter()
                .filter_map(|&id| {
                    let b = guard.value(id)?;
                    Some((id, globals[id.index()].name.clone(), b))
                })
                .collect(),
            kept: None,
        }
    }

    /// Copies the first `count` globals of a locked store or a frame.
    pub(crate) fn take_all(guard: &impl GlobalAccess, count: usize) -> GlobalState {
        let ids: Vec<GlobalId> = (0..count.min(guard.descriptors().len()))
            .map(|i| GlobalId(i as u32))
            .collect();
        GlobalState::take(guard, &ids)
    }

    /// The same state with a copy of `kept`, the program's kept records.
    pub(crate) fn with_kept(mut self, kept: &Kept) -> GlobalState {
        self.kept = Some(kept.snapshot());
        self
    }

    /// Puts the kept records of the state (if it holds them) back into
    /// `kept`.
    pub(crate) fn put_kept(&self, kept: &Kept) {
        if let Some(mine) = &self.kept {
            kept.assign(mine);
        }
    }

    /// Writes the values back into a locked store or a frame of the same
    /// program (the kept records: [`GlobalState::put_kept`]).
    pub(crate) fn put(&self, guard: &mut impl GlobalAccess) -> Result<(), Error> {
        let mismatch = |detail: String| {
            Error::new(
                ErrorKind::Usage,
                format!("the global state does not belong to this program: {detail}"),
            )
        };
        let globals = guard.descriptors();
        for (id, name, _) in &self.values {
            match globals.get(id.index()) {
                Some(g) if g.name == *name => {}
                _ => return Err(mismatch(format!("no global `{name}` at position {id}"))),
            }
        }
        for (id, _, value) in &self.values {
            guard.assign(*id, value).map_err(mismatch)?;
        }
        Ok(())
    }
}

/// The program's globals among the first `shared` globals of `module` that
/// the procedures `roots` and everything they call may write: stored to,
/// or passed by reference to a call (the callee may write its dummy).
pub(crate) fn written_globals(module: &Module, roots: &[ProcId], shared: usize) -> Vec<GlobalId> {
    let mut seen = vec![false; module.procs.len()];
    let mut work: Vec<ProcId> = roots.to_vec();
    let mut written = vec![false; shared];
    while let Some(p) = work.pop() {
        if std::mem::replace(&mut seen[p.index()], true) {
            continue;
        }
        let proc = module.proc(p);
        let mut mark = |var: VarId| {
            if let Storage::Global(g, _) = proc.var(var).storage {
                if g.index() < shared {
                    written[g.index()] = true;
                }
            }
        };
        for inst in &proc.insts {
            match &inst.kind {
                Inst::Store(var, _) | Inst::StoreElem(var, ..) => mark(*var),
                Inst::CharAssign(dst, _) => {
                    if let CharBase::Var { var, .. } = dst.base {
                        mark(var);
                    }
                }
                Inst::Call(callee, args) => {
                    work.push(*callee);
                    for arg in args {
                        if let CallArg::Var(var)
                        | CallArg::Elem(var, _)
                        | CallArg::Slice(var, _, _) = arg
                        {
                            mark(*var);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (0..shared)
        .filter(|&i| written[i])
        .map(|i| GlobalId(i as u32))
        .collect()
}

/// The globals of one evaluation: a private copy of the program's (and the
/// module's derivative) globals taken from the store when the evaluation
/// starts; the program's globals go back into the store when it ends
/// (dropped), unless it is a fork ([`Held::fork`]) whose end state its
/// parent takes over. A program without globals has no frame.
pub(crate) struct Held<'a> {
    pub(crate) frame: Option<GlobalFrame>,
    /// How many of the store's globals are the program's.
    pub(crate) shared: usize,
    /// The store the program's globals are written back into.
    store: Option<&'a GlobalStore>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let (Some(store), Some(frame)) = (self.store, &self.frame) {
            store.lock().store_back(frame, self.shared);
        }
    }
}

impl<'a> Held<'a> {
    /// The globals of an evaluation against `store` (`shared` of them the
    /// program's): a copy of the store's current values.
    pub(crate) fn new(store: &'a GlobalStore, shared: usize) -> Result<Held<'a>, Error> {
        let frame = if store.is_empty() {
            None
        } else {
            Some(store.lock().frame().map_err(|e| {
                Error::new(ErrorKind::Internal, format!("cannot copy the globals: {e}"))
            })?)
        };
        Ok(Held {
            frame,
            shared,
            store: Some(store),
        })
    }

    /// A copy of these globals for a part of this evaluation run on
    /// another thread; its end state is not written back (see
    /// [`Held::adopt`]).
    pub(crate) fn fork(&self) -> Result<Held<'a>, Error> {
        let frame = match &self.frame {
            Some(f) => Some(f.try_clone().map_err(|e| {
                Error::new(ErrorKind::Internal, format!("cannot copy the globals: {e}"))
            })?),
            None => None,
        };
        Ok(Held {
            frame,
            shared: self.shared,
            store: None,
        })
    }

    /// Takes over the program's globals as the fork `part` left them.
    pub(crate) fn adopt(&mut self, part: &Held<'_>) {
        if let (Some(mine), Some(theirs)) = (&mut self.frame, &part.frame) {
            mine.assign_from(theirs, self.shared);
        }
    }

    /// A copy of the globals `ids` (and of the program's kept records,
    /// unless this is a fork).
    pub(crate) fn state(&self, ids: &[GlobalId]) -> GlobalState {
        let state = self
            .frame
            .as_ref()
            .map(|g| GlobalState::take(g, ids))
            .unwrap_or_default();
        self.with_kept(state)
    }

    /// A copy of every global of the program (and of its kept records,
    /// unless this is a fork).
    pub(crate) fn state_all(&self) -> GlobalState {
        let state = self
            .frame
            .as_ref()
            .map(|g| GlobalState::take_all(g, self.shared))
            .unwrap_or_default();
        self.with_kept(state)
    }

    /// `state` with a copy of the kept records of the store.
    fn with_kept(&self, state: GlobalState) -> GlobalState {
        match self.store {
            Some(store) => state.with_kept(store.kept()),
            None => state,
        }
    }

    /// Puts globals (and kept records) back.
    pub(crate) fn put(&mut self, state: &GlobalState) -> Result<(), Error> {
        if let Some(store) = self.store {
            state.put_kept(store.kept());
        }
        match &mut self.frame {
            Some(g) => state.put(g),
            None if state.is_empty() => Ok(()),
            None => Err(Error::new(
                ErrorKind::Usage,
                "the global state does not belong to this program",
            )),
        }
    }

    /// Zeroes the derivative globals (tangents, adjoints) of the module, so
    /// that nothing an earlier call left there leaks into the next one.
    pub(crate) fn clear_derivatives(&mut self) {
        if let Some(g) = &mut self.frame {
            for i in self.shared..g.len() {
                g.clear(GlobalId(i as u32));
            }
        }
    }
}

/// The program's store for `module`'s globals: a fresh one for the program
/// itself, an extension for a derivative module.
pub(crate) fn store_for(
    root: &GlobalStore,
    globals: &[adjit_ir::Global],
) -> Result<GlobalStore, Error> {
    root.extend(globals).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("derivative module globals do not extend the program's: {e}"),
        )
    })
}
