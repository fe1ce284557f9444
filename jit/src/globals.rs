//! Storage of a module's globals (module variables, SAVE locals, variables
//! initialised by DATA), and the lock that serialises every access to it.
//!
//! Generated code finds a global through a table of addresses that the
//! call's runtime context points to (`RuntimeCtx::globals`), so one
//! compiled module runs against any storage of the same layout: the store
//! itself, or a [`GlobalFrame`], a private copy of the store taken for one
//! evaluation, which lets evaluations of one program run on many threads at
//! once (each against its own copy) and be written back when they end.
//!
//! A [`GlobalStore`] can be *extended*: the store of a derivative module
//! (the program's globals followed by their tangent or adjoint companions)
//! shares the storage of the program's globals and their lock with the
//! program's own store, so the primal, tangent and adjoint code of one
//! program read and write one set of module variables, as Fortran code
//! linked together would. Generated code addresses the storage directly;
//! the host reads and writes it only through a [`GlobalsGuard`].

use crate::ir::io::Kept;
use crate::ir::{self, Buffer};
use crate::ir::{Const, GlobalId, Type};
use std::cell::UnsafeCell;
use std::sync::{Arc, Mutex, MutexGuard};

/// One global's bytes: 16-byte aligned words that generated code writes
/// through raw pointers (hence the cells).
struct Words(Box<[UnsafeCell<u128>]>);

// SAFETY: the words are plain bytes; every access by the host or by generated
// code happens while the owning store's lock is held, or through the one
// `GlobalFrame` that owns them, borrowed mutably by the call that writes.
unsafe impl Send for Words {}
// SAFETY: see the Send note: the store's lock serialises all access.
unsafe impl Sync for Words {}

impl Words {
    /// Zeroed words for `bytes` bytes; an error instead of an abort when
    /// the memory cannot be had (sizes come from the program).
    fn new(bytes: usize) -> Result<Words, String> {
        let n = bytes.div_ceil(16).max(1);
        let mut v = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|e| format!("cannot allocate {bytes} bytes: {e}"))?;
        v.extend((0..n).map(|_| UnsafeCell::new(0)));
        Ok(Words(v.into_boxed_slice()))
    }

    fn ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.0.as_ptr()) as *mut u8
    }

    fn byte_len(&self) -> usize {
        self.0.len() * 16
    }
}

/// The storage of a module's globals, indexed by [`GlobalId`], and the lock
/// held by every call of code that uses them.
pub struct GlobalStore {
    globals: Vec<ir::Global>,
    words: Vec<Arc<Words>>,
    /// The addresses of `words`, for generated code.
    table: Vec<usize>,
    lock: Arc<Mutex<()>>,
    /// The program's kept records (shared by extensions).
    kept: Kept,
}

/// A private copy of the globals of a [`GlobalStore`] (all of them, the
/// program's and a derivative module's own) for one evaluation: generated
/// code runs against it with no lock held
/// (`CompiledModule::call_in_frame`), and the evaluation writes the
/// program's globals back into the store when it ends
/// ([`GlobalsGuard::store_back`]).
pub struct GlobalFrame {
    globals: Vec<ir::Global>,
    words: Vec<Words>,
    /// The addresses of `words`, for generated code.
    table: Vec<usize>,
    /// The lock of the store copied: identifies the program.
    lock: Arc<Mutex<()>>,
}

impl std::fmt::Debug for GlobalFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalFrame")
            .field("globals", &self.globals.len())
            .finish()
    }
}

impl std::fmt::Debug for GlobalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.globals.iter().map(|g| g.name.as_str()).collect();
        f.debug_struct("GlobalStore")
            .field("globals", &names)
            .finish()
    }
}

/// Bytes of storage of a global.
pub fn global_bytes(g: &ir::Global) -> usize {
    let per = if g.ty == Type::Char {
        g.char_len.max(0) as usize
    } else {
        g.ty.size()
    };
    (g.len().max(0) as usize).saturating_mul(per)
}

/// Storage units of a global (bytes for characters, elements otherwise).
fn global_units(g: &ir::Global) -> usize {
    let size = if g.ty == Type::Char { 1 } else { g.ty.size() };
    global_bytes(g) / size
}

/// Fresh storage for `g` holding its initial values.
fn initial_words(g: &ir::Global) -> Result<Words, String> {
    let bytes = global_bytes(g);
    let words = Words::new(bytes).map_err(|e| format!("global `{}`: {e}", g.name))?;
    // SAFETY: the byte view covers exactly the allocated words, which nobody
    // else can see yet.
    let raw = unsafe { std::slice::from_raw_parts_mut(words.ptr(), words.byte_len()) };
    if g.ty == Type::Char {
        raw[..bytes].fill(b' ');
    }
    let size = if g.ty == Type::Char { 1 } else { g.ty.size() };
    for (i, c) in g.init.iter().enumerate() {
        let at = i * size;
        if at + size > bytes {
            return Err(format!(
                "global `{}` has more initial values than elements",
                g.name
            ));
        }
        let dst = &mut raw[at..at + size];
        match (g.ty, *c) {
            (Type::F64, Const::Float(x)) => dst.copy_from_slice(&x.to_ne_bytes()),
            (Type::F32, Const::Float(x)) => dst.copy_from_slice(&(x as f32).to_ne_bytes()),
            (Type::F64, Const::Int(x)) => dst.copy_from_slice(&(x as f64).to_ne_bytes()),
            (Type::F32, Const::Int(x)) => dst.copy_from_slice(&(x as f32).to_ne_bytes()),
            (Type::I64, Const::Int(x)) => dst.copy_from_slice(&x.to_ne_bytes()),
            (Type::I32, Const::Int(x)) => dst.copy_from_slice(&(x as i32).to_ne_bytes()),
            (Type::Bool, Const::Bool(x)) => dst[0] = x as u8,
            (Type::Char, Const::Char(x)) => dst[0] = x,
            (ty, c) => {
                return Err(format!(
                    "global `{}`: initial value {c:?} does not fit {}",
                    g.name,
                    ty.name()
                ))
            }
        }
    }
    Ok(words)
}

impl GlobalStore {
    /// Storage for `globals`, holding their initial values, with a lock of
    /// its own.
    pub fn new(globals: &[ir::Global]) -> Result<GlobalStore, String> {
        let words = globals
            .iter()
            .map(|g| initial_words(g).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GlobalStore {
            globals: globals.to_vec(),
            table: words.iter().map(|w| w.ptr() as usize).collect(),
            words,
            lock: Arc::new(Mutex::new(())),
            kept: Kept::default(),
        })
    }

    /// A store for `globals` whose first `self.len()` entries are this
    /// store's globals (same type and size, checked): their storage and the
    /// lock are shared; the others get fresh storage with their initial
    /// values.
    pub fn extend(&self, globals: &[ir::Global]) -> Result<GlobalStore, String> {
        if globals.len() < self.globals.len() {
            return Err(format!(
                "{} globals cannot extend a store of {}",
                globals.len(),
                self.globals.len()
            ));
        }
        let mut words = Vec::with_capacity(globals.len());
        for (i, g) in globals.iter().enumerate() {
            match self.globals.get(i) {
                Some(mine) => {
                    if mine.ty != g.ty || global_bytes(mine) != global_bytes(g) {
                        return Err(format!(
                            "global `{}` does not match the shared global `{}`",
                            g.name, mine.name
                        ));
                    }
                    words.push(self.words[i].clone());
                }
                None => words.push(Arc::new(initial_words(g)?)),
            }
        }
        Ok(GlobalStore {
            globals: globals.to_vec(),
            table: words.iter().map(|w| w.ptr() as usize).collect(),
            words,
            lock: self.lock.clone(),
            kept: self.kept.clone(),
        })
    }

    /// Number of globals.
    pub fn len(&self) -> usize {
        self.globals.len()
    }

    /// The records the program keeps between calls (the allocations of
    /// its ALLOCATABLE module and SAVE arrays), shared by the store's
    /// extensions and released with the last of them. They are not part
    /// of the frames: every evaluation reads and writes them in place.
    pub fn kept(&self) -> &Kept {
        &self.kept
    }

    /// True when the store holds no global (calls need no lock).
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }

    /// The descriptors of the globals.
    pub fn globals(&self) -> &[ir::Global] {
        &self.globals
    }

    /// True when both stores are serialised by the same lock (one is an
    /// extension of the other, or both extend the same store).
    pub fn shares_lock_with(&self, other: &GlobalStore) -> bool {
        Arc::ptr_eq(&self.lock, &other.lock)
    }

    /// Takes the lock: no generated code using this store (or a store that
    /// shares its lock) runs until the guard is dropped.
    pub fn lock(&self) -> GlobalsGuard<'_> {
        GlobalsGuard {
            store: self,
            _held: self.lock.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// The table of the globals' addresses generated code reads.
    pub(crate) fn table(&self) -> *const usize {
        self.table.as_ptr()
    }

    /// True when `frame` is a copy of this store or of a store sharing its
    /// lock, with the same number of globals.
    pub fn fits(&self, frame: &GlobalFrame) -> bool {
        Arc::ptr_eq(&self.lock, &frame.lock) && frame.globals.len() == self.globals.len()
    }
}

/// A copy of global `g` stored at `ptr`.
fn read(g: &ir::Global, ptr: *const u8) -> Buffer {
    let mut out = Buffer::zeros(g.ty, global_units(g));
    // SAFETY: both regions hold `global_bytes(g)` bytes; callers exclude
    // concurrent writers (a lock guard, or a frame borrowed mutably by its
    // only user).
    unsafe { std::ptr::copy_nonoverlapping(ptr, out.as_mut_ptr(), global_bytes(g)) };
    out
}

/// Overwrites global `g` stored at `ptr` (the buffer must match).
fn write(g: &ir::Global, ptr: *mut u8, value: &Buffer) -> Result<(), String> {
    if value.ty() != g.ty || value.len() != global_units(g) {
        return Err(format!(
            "global `{}` needs {} {} elements",
            g.name,
            global_units(g),
            g.ty.name()
        ));
    }
    // SAFETY: sizes checked above; callers hold exclusive access to the
    // storage, and `value` is a distinct allocation.
    unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), ptr, global_bytes(g)) };
    Ok(())
}

/// Sets global `g` stored at `ptr` to zero (blank for characters).
fn fill(g: &ir::Global, ptr: *mut u8) {
    let value = if g.ty == Type::Char { b' ' } else { 0 };
    // SAFETY: the storage holds `global_bytes(g)` bytes; callers hold
    // exclusive access.
    unsafe { std::ptr::write_bytes(ptr, value, global_bytes(g)) };
}

impl GlobalFrame {
    /// Number of globals.
    pub fn len(&self) -> usize {
        self.globals.len()
    }

    /// True when the frame holds no global.
    pub fn is_empty(&self) -> bool {
        self.globals.is_empty()
    }

    /// The descriptors of the globals.
    pub fn globals(&self) -> &[ir::Global] {
        &self.globals
    }

    /// A copy of a global's contents (column-major; bytes for characters).
    pub fn get(&self, id: GlobalId) -> Option<Buffer> {
        let g = self.globals.get(id.index())?;
        Some(read(g, self.words.get(id.index())?.ptr()))
    }

    /// Overwrites a global's contents (the buffer must match its type and
    /// size).
    pub fn set(&mut self, id: GlobalId, value: &Buffer) -> Result<(), String> {
        let g = self.globals.get(id.index()).ok_or("no such global")?;
        write(g, self.words[id.index()].ptr(), value)
    }

    /// Sets every element of a global to zero (blank for characters).
    pub fn clear(&mut self, id: GlobalId) {
        if let Some(g) = self.globals.get(id.index()) {
            fill(g, self.words[id.index()].ptr());
        }
    }

    /// A copy of this frame (for evaluations that start from one state on
    /// several threads).
    pub fn try_clone(&self) -> Result<GlobalFrame, String> {
        copy_frame(&self.globals, self.words.iter(), &self.lock)
    }

    /// Overwrites the first `count` globals with those of `other`, a frame
    /// of the same program.
    pub fn assign_from(&mut self, other: &GlobalFrame, count: usize) {
        if !Arc::ptr_eq(&self.lock, &other.lock) {
            return;
        }
        let n = count.min(self.words.len()).min(other.words.len());
        for i in 0..n {
            let bytes = global_bytes(&self.globals[i]);
            // SAFETY: same program, so same global sizes; `&mut self`
            // excludes other users of this frame and `other` is a distinct
            // frame.
            unsafe {
                std::ptr::copy_nonoverlapping(other.words[i].ptr(), self.words[i].ptr(), bytes)
            };
        }
    }

    /// The table of the globals' addresses generated code reads.
    pub(crate) fn table(&self) -> *const usize {
        self.table.as_ptr()
    }
}

/// Reading and writing globals by id: through a lock guard on a store, or
/// in an evaluation's frame.
pub trait GlobalAccess {
    /// The descriptors of the globals.
    fn descriptors(&self) -> &[ir::Global];
    /// A copy of a global's contents.
    fn value(&self, id: GlobalId) -> Option<Buffer>;
    /// Overwrites a global's contents (the buffer must match).
    fn assign(&mut self, id: GlobalId, value: &Buffer) -> Result<(), String>;
}

impl GlobalAccess for GlobalsGuard<'_> {
    fn descriptors(&self) -> &[ir::Global] {
        self.store.globals()
    }
    fn value(&self, id: GlobalId) -> Option<Buffer> {
        self.get(id)
    }
    fn assign(&mut self, id: GlobalId, value: &Buffer) -> Result<(), String> {
        self.set(id, value)
    }
}

impl GlobalAccess for GlobalFrame {
    fn descriptors(&self) -> &[ir::Global] {
        self.globals()
    }
    fn value(&self, id: GlobalId) -> Option<Buffer> {
        self.get(id)
    }
    fn assign(&mut self, id: GlobalId, value: &Buffer) -> Result<(), String> {
        self.set(id, value)
    }
}

/// A frame holding a copy of the storage `words` of `globals`.
fn copy_frame<'a>(
    globals: &[ir::Global],
    words: impl IntoIterator<Item = &'a Words>,
    lock: &Arc<Mutex<()>>,
) -> Result<GlobalFrame, String> {
    let mut copies = Vec::with_capacity(globals.len());
    for (g, w) in globals.iter().zip(words) {
        let copy = Words::new(global_bytes(g)).map_err(|e| format!("global `{}`: {e}", g.name))?;
        // SAFETY: both hold at least `byte_len` bytes of the same size
        // (same global); the caller excludes writers of the source.
        unsafe { std::ptr::copy_nonoverlapping(w.ptr(), copy.ptr(), w.byte_len()) };
        copies.push(copy);
    }
    Ok(GlobalFrame {
        globals: globals.to_vec(),
        table: copies.iter().map(|w| w.ptr() as usize).collect(),
        words: copies,
        lock: lock.clone(),
    })
}

/// Exclusive access to the globals of a [`GlobalStore`].
pub struct GlobalsGuard<'a> {
    store: &'a GlobalStore,
    _held: MutexGuard<'a, ()>,
}

impl GlobalsGuard<'_> {
    /// The store this guard locks.
    pub fn store(&self) -> &GlobalStore {
        self.store
    }

    /// A copy of a global's contents (column-major; bytes for characters).
    pub fn get(&self, id: GlobalId) -> Option<Buffer> {
        let g = self.store.globals.get(id.index())?;
        Some(read(g, self.store.words.get(id.index())?.ptr()))
    }

    /// Overwrites a global's contents (the buffer must match its type and
    /// size).
    pub fn set(&mut self, id: GlobalId, value: &Buffer) -> Result<(), String> {
        let g = self.store.globals.get(id.index()).ok_or("no such global")?;
        write(g, self.store.words[id.index()].ptr(), value)
    }

    /// Sets every element of a global to zero (blank for characters).
    pub fn clear(&mut self, id: GlobalId) {
        if let Some(g) = self.store.globals.get(id.index()) {
            fill(g, self.store.words[id.index()].ptr());
        }
    }

    /// A private copy of every global of the locked store, for one
    /// evaluation.
    pub fn frame(&self) -> Result<GlobalFrame, String> {
        copy_frame(
            &self.store.globals,
            self.store.words.iter().map(|w| &**w),
            &self.store.lock,
        )
    }

    /// Writes the first `count` globals of `frame` (a copy of this store or
    /// of one sharing its lock) back into the store.
    pub fn store_back(&mut self, frame: &GlobalFrame, count: usize) {
        if !Arc::ptr_eq(&self.store.lock, &frame.lock) {
            return;
        }
        let n = count.min(self.store.words.len()).min(frame.words.len());
        for i in 0..n {
            let bytes = global_bytes(&self.store.globals[i]);
            // SAFETY: the same program's globals have the same sizes; the
            // guard excludes other users of the store, and the frame is a
            // distinct allocation.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    frame.words[i].ptr(),
                    self.store.words[i].ptr(),
                    bytes,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(name: &str, ty: Type, init: Vec<Const>) -> ir::Global {
        ir::Global {
            name: name.into(),
            ty,
            dims: Vec::new(),
            char_len: 1,
            init,
        }
    }

    #[test]
    fn extended_stores_share_the_prefix_and_the_lock() {
        let base =
            GlobalStore::new(&[scalar("m::a", Type::F64, vec![Const::Float(2.5)])]).expect("store");
        let more = [
            scalar("m::a", Type::F64, Vec::new()),
            scalar("m::a_b", Type::F64, Vec::new()),
        ];
        let ext = base.extend(&more).expect("extend");
        assert!(ext.shares_lock_with(&base));
        {
            let mut g = ext.lock();
            assert_eq!(g.get(GlobalId(0)), Some(Buffer::F64(vec![2.5])));
            g.set(GlobalId(0), &Buffer::F64(vec![7.0])).expect("set");
            g.set(GlobalId(1), &Buffer::F64(vec![3.0])).expect("set");
            g.clear(GlobalId(1));
            assert_eq!(g.get(GlobalId(1)), Some(Buffer::F64(vec![0.0])));
        }
        assert_eq!(base.lock().get(GlobalId(0)), Some(Buffer::F64(vec![7.0])));
        assert!(base.lock().set(GlobalId(0), &Buffer::I32(vec![1])).is_err());
        let wrong = [scalar("m::a", Type::I32, Vec::new())];
        assert!(base.extend(&wrong).is_err());
        assert!(base.extend(&[]).is_err());
    }

    #[test]
    fn frames_are_private_copies_written_back_on_request() {
        let base = GlobalStore::new(&[
            scalar("m::a", Type::F64, vec![Const::Float(1.5)]),
            scalar("m::n", Type::I32, vec![Const::Int(4)]),
        ])
        .expect("store");
        let mut frame = base.lock().frame().expect("frame");
        assert!(base.fits(&frame));
        assert_eq!(frame.get(GlobalId(0)), Some(Buffer::F64(vec![1.5])));
        assert_eq!(frame.get(GlobalId(1)), Some(Buffer::I32(vec![4])));
        frame
            .set(GlobalId(0), &Buffer::F64(vec![9.0]))
            .expect("set");
        frame.set(GlobalId(1), &Buffer::I32(vec![7])).expect("set");
        // The store is untouched until the frame is written back.
        assert_eq!(base.lock().get(GlobalId(0)), Some(Buffer::F64(vec![1.5])));
        let mut copy = frame.try_clone().expect("clone");
        copy.clear(GlobalId(0));
        assert_eq!(frame.get(GlobalId(0)), Some(Buffer::F64(vec![9.0])));
        // Only the first `count` globals go back.
        base.lock().store_back(&frame, 1);
        assert_eq!(base.lock().get(GlobalId(0)), Some(Buffer::F64(vec![9.0])));
        assert_eq!(base.lock().get(GlobalId(1)), Some(Buffer::I32(vec![4])));
        frame.assign_from(&copy, 2);
        assert_eq!(frame.get(GlobalId(0)), Some(Buffer::F64(vec![0.0])));
        // A frame of another program fits nowhere else.
        let other = GlobalStore::new(&[scalar("m::a", Type::F64, Vec::new())]).expect("store");
        assert!(!other.fits(&frame));
    }

    #[test]
    fn initial_values_that_do_not_fit_are_refused() {
        let g = scalar("m::n", Type::I32, vec![Const::Float(1.5)]);
        assert!(GlobalStore::new(&[g]).is_err());
        let two = scalar(
            "m::x",
            Type::F64,
            vec![Const::Float(1.0), Const::Float(2.0)],
        );
        assert!(GlobalStore::new(&[two]).is_err());
    }
}
