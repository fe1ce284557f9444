//! Segmented runtime stacks (the adjoint's tapes) and the per-call bump arena.
//!
//! It stores words; what the adjoint records in them is not its business.
//!
//! This module owns the storage behind the three runtime stacks and the arena
//! from which generated code allocates local arrays. A [`SegmentedStack`] is a
//! list of fixed-capacity segments; generated code pushes and pops inline
//! within the current segment (the `top` / `base` / `end` registers in
//! [`StackRegs`]) and calls into this module only to move to the next segment
//! (push on a full segment) or back to the previous one (pop on an empty
//! segment). Segments are never moved, so every pointer stays valid.
//!
//! Segments are anonymous memory maps while the total stays under the RAM
//! budget of [`StackConfig`]; past it, new segments are memory-mapped
//! temporary files (unlinked at once, so nothing is left on disk), which lets
//! a tape larger than the budget spill to disk transparently.

use memmap2::{MmapMut, MmapOptions};
use std::path::PathBuf;

/// Bytes of one stack entry (every stack stores 64-bit words).
pub const WORD: usize = 8;

/// Sizing of the runtime stacks.
#[derive(Clone, Debug)]
pub struct StackConfig {
    /// Bytes of anonymous memory all three stacks may map together before
    /// new segments are backed by temporary files.
    pub ram_budget: usize,
    /// Bytes of the first segment of each stack (rounded up to a word).
    pub initial_segment_bytes: usize,
    /// Upper limit of a segment's size; segments double up to it.
    pub max_segment_bytes: usize,
    /// Directory for spill files (`std::env::temp_dir()` when `None`).
    pub spill_dir: Option<PathBuf>,
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            ram_budget: 4 << 30,
            initial_segment_bytes: 64 << 10,
            max_segment_bytes: 64 << 20,
            spill_dir: None,
        }
    }
}

/// The registers generated code reads and writes for one stack. Layout is
/// part of the native calling convention (offsets used by codegen).
#[repr(C)]
#[derive(Debug)]
pub struct StackRegs {
    /// Next free word of the current segment.
    pub top: *mut u64,
    /// First word of the current segment.
    pub base: *mut u64,
    /// One past the last word of the current segment.
    pub end: *mut u64,
    /// Number of pushes executed. Generated code adds its pushes at calls,
    /// returns and segment switches (counted, or, on a stack the procedure
    /// only pushes on, derived from how far `top` moved), not at every push.
    pub pushed: u64,
}

impl Default for StackRegs {
    fn default() -> Self {
        StackRegs {
            top: std::ptr::null_mut(),
            base: std::ptr::null_mut(),
            end: std::ptr::null_mut(),
            pushed: 0,
        }
    }
}

/// One mapped segment.
struct Segment {
    map: MmapMut,
    words: usize,
    spilled: bool,
    /// Words in use when the stack last moved on to a later segment: all of
    /// them after a push on a full segment, fewer after a
    /// [`SegmentedStack::reserve`] that left the rest of the segment unused
    /// (meaningful for the segments below the current one).
    used: usize,
}

impl Segment {
    fn start(&mut self) -> *mut u64 {
        self.map.as_mut_ptr() as *mut u64
    }
}

/// Why a segment could not be mapped.
#[derive(Debug)]
pub struct GrowError(pub String);

/// Shared accounting of mapped bytes across the three stacks of a runtime.
#[derive(Debug, Default)]
pub struct MapBudget {
    /// Anonymous bytes mapped so far.
    pub ram_bytes: usize,
    /// File-backed bytes mapped so far.
    pub spilled_bytes: usize,
}

impl MapBudget {
    /// Takes the bytes of an unmapped segment off the count.
    fn release(&mut self, segment: &Segment) {
        let bytes = segment.words * WORD;
        if segment.spilled {
            self.spilled_bytes -= bytes;
        } else {
            self.ram_bytes -= bytes;
        }
    }
}

/// Statistics of one stack.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackStats {
    /// Values pushed since the runtime was created (or cleared).
    pub pushed: u64,
    /// Values currently on the stack.
    pub depth: u64,
    /// Largest depth observed (sampled at segment switches and at the end of
    /// every call, so exact at call boundaries).
    pub peak: u64,
    /// Bytes of segments currently mapped for this stack.
    pub mapped_bytes: u64,
    /// Of `mapped_bytes`, the part backed by temporary files.
    pub spilled_bytes: u64,
}

/// A position in a [`SegmentedStack`] (see [`SegmentedStack::position`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackPosition {
    segment: usize,
    offset: usize,
    /// False for the position of a stack that had no segment yet.
    mapped: bool,
}

/// A stack of 64-bit words stored in a list of segments.
#[derive(Default)]
pub struct SegmentedStack {
    segments: Vec<Segment>,
    /// Index of the segment the registers point into (meaningless when
    /// `segments` is empty).
    current: usize,
    peak: u64,
}

impl SegmentedStack {
    /// Words stored in the segments below the current one.
    #[inline]
    fn words_below(&self) -> u64 {
        self.segments[..self.current.min(self.segments.len())]
            .iter()
            .map(|s| s.used as u64)
            .sum()
    }

    /// Number of values on the stack given its registers.
    #[inline]
    pub fn depth(&self, regs: &StackRegs) -> u64 {
        if self.segments.is_empty() {
            return 0;
        }
        // SAFETY: top and base point into the same live segment.
        let in_current = unsafe { regs.top.offset_from(regs.base) } as u64;
        self.words_below() + in_current
    }

    /// Records the current depth into the peak.
    #[inline]
    pub fn sample_peak(&mut self, regs: &StackRegs) {
        let d = self.depth(regs);
        self.peak = self.peak.max(d);
    }

    fn segment_words(&self, config: &StackConfig, index: usize) -> usize {
        let first = config.initial_segment_bytes.max(WORD) / WORD;
        let max = config.max_segment_bytes.max(WORD) / WORD;
        let shift = index.min(30) as u32;
        first.saturating_mul(1usize << shift).min(max.max(first))
    }

    /// Maps segment `index`, of its doubling size or `min_words`, whichever
    /// is larger.
    fn map_segment(
        &self,
        config: &StackConfig,
        budget: &mut MapBudget,
        index: usize,
        min_words: usize,
    ) -> Result<Segment, GrowError> {
        let words = self.segment_words(config, index).max(min_words);
        let bytes = words * WORD;
        if budget.ram_bytes + bytes <= config.ram_budget {
            let map = MmapOptions::new()
                .len(bytes)
                .map_anon()
                .map_err(|e| GrowError(format!("cannot map {bytes} bytes: {e}")))?;
            budget.ram_bytes += bytes;
            return Ok(Segment {
                map,
                words,
                spilled: false,
                used: 0,
            });
        }
        let dir = config.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
        let file = spill_file(&dir).map_err(|e| {
            GrowError(format!(
                "cannot create spill file in {}: {e}",
                dir.display()
            ))
        })?;
        file.set_len(bytes as u64)
            .map_err(|e| GrowError(format!("cannot size spill file to {bytes} bytes: {e}")))?;
        // SAFETY: the file was just created by us and unlinked; nobody else
        // can map or truncate it while the map lives.
        let map = unsafe { MmapOptions::new().len(bytes).map_mut(&file) }
            .map_err(|e| GrowError(format!("cannot map spill file: {e}")))?;
        budget.spilled_bytes += bytes;
        Ok(Segment {
            map,
            words,
            spilled: true,
            used: 0,
        })
    }

    /// Called when a push finds the current segment full (or no segment):
    /// moves the registers to the next segment, mapping it if needed.
    pub fn advance(
        &mut self,
        regs: &mut StackRegs,
        config: &StackConfig,
        budget: &mut MapBudget,
    ) -> Result<(), GrowError> {
        let next = if self.segments.is_empty() {
            0
        } else {
            self.leave_current(regs);
            self.current + 1
        };
        if next == self.segments.len() {
            let seg = self.map_segment(config, budget, next, 0)?;
            self.segments.push(seg);
        }
        self.enter(regs, next);
        Ok(())
    }

    /// Records the words in use in the current segment before the stack
    /// moves on to the next one.
    fn leave_current(&mut self, regs: &StackRegs) {
        self.sample_peak(regs);
        // SAFETY: top and base point into the same live segment.
        let used = unsafe { regs.top.offset_from(regs.base) } as usize;
        self.segments[self.current].used = used;
    }

    /// Points the registers at the start of segment `index` (mapped).
    fn enter(&mut self, regs: &mut StackRegs, index: usize) {
        self.current = index;
        let seg = &mut self.segments[index];
        let start = seg.start();
        regs.base = start;
        regs.top = start;
        // SAFETY: `words` words are mapped from `start`.
        regs.end = unsafe { start.add(seg.words) };
    }

    /// Makes room for `words` pushes in one segment, so that a loop whose
    /// pushes were counted in advance runs without segment tests: when the
    /// current segment has less room, the registers move to a segment
    /// with at least `words` free (the current one if it is empty, else the
    /// next one, mapped or replaced by a larger map when smaller), leaving
    /// the rest of the current segment unused ([`Segment::used`] remembers
    /// where its values end, for the pops that come back to it). Requests
    /// above the largest segment size are refused (the loop then runs with
    /// its per-push tests), as are requests that cannot be mapped; a
    /// refusal leaves the registers as they were. Spilling past the RAM
    /// budget works as for [`SegmentedStack::advance`].
    pub fn reserve(
        &mut self,
        regs: &mut StackRegs,
        config: &StackConfig,
        budget: &mut MapBudget,
        words: usize,
    ) -> Result<(), GrowError> {
        let max = config
            .max_segment_bytes
            .max(config.initial_segment_bytes)
            .max(WORD)
            / WORD;
        if words > max {
            return Err(GrowError(format!(
                "{words} words exceed the largest segment ({max} words)"
            )));
        }
        if !self.segments.is_empty() {
            // SAFETY: top and end point into the same live segment.
            let room = unsafe { regs.end.offset_from(regs.top) } as usize;
            if room >= words {
                return Ok(());
            }
        }
        let target = if self.segments.is_empty() || regs.top == regs.base {
            self.current
        } else {
            self.current + 1
        };
        match self.segments.get(target) {
            Some(seg) if seg.words >= words => {}
            Some(_) => {
                // Nothing above the current top is live: the smaller
                // segment is replaced by a larger map (made first, so that
                // a refusal leaves the old one).
                let larger = self.map_segment(config, budget, target, words)?;
                let smaller = std::mem::replace(&mut self.segments[target], larger);
                budget.release(&smaller);
            }
            None => {
                let seg = self.map_segment(config, budget, target, words)?;
                self.segments.push(seg);
            }
        }
        if target != self.current {
            self.leave_current(regs);
        }
        self.enter(regs, target);
        Ok(())
    }

    /// Called when a pop finds the current segment empty: moves back to the
    /// previous segment, its top where its values end (the segment is full
    /// unless a [`SegmentedStack::reserve`] left it early). False when the
    /// whole stack is empty.
    pub fn retreat(&mut self, regs: &mut StackRegs) -> bool {
        if self.segments.is_empty() || self.current == 0 {
            return false;
        }
        self.sample_peak(regs);
        self.current -= 1;
        let seg = &mut self.segments[self.current];
        let start = seg.start();
        regs.base = start;
        // SAFETY: `words` words are mapped from `start`, and `used <= words`.
        unsafe {
            regs.end = start.add(seg.words);
            regs.top = start.add(seg.used);
        }
        true
    }

    /// The current position, to return to with [`SegmentedStack::rewind`].
    pub fn position(&self, regs: &StackRegs) -> StackPosition {
        if self.segments.is_empty() {
            return StackPosition::default();
        }
        // SAFETY: top and base point into the same live segment.
        let offset = unsafe { regs.top.offset_from(regs.base) } as usize;
        StackPosition {
            segment: self.current,
            offset,
            mapped: true,
        }
    }

    /// Empties the stack, its segments kept mapped: the registers at the
    /// start of the first segment (nothing to do before the first push).
    #[inline]
    pub fn rewind_to_start(&mut self, regs: &mut StackRegs) {
        if let Some(first) = self.segments.first_mut() {
            self.current = 0;
            let start = first.start();
            regs.base = start;
            regs.top = start;
            // SAFETY: `words` words are mapped from `start`.
            regs.end = unsafe { start.add(first.words) };
        }
    }

    /// Moves the top back (or forward) to a position taken earlier. Pops
    /// never erase words and segments stay mapped until `clear`, so the
    /// values between the current top and the position are the ones that
    /// were there when it was taken, provided nothing was pushed over them
    /// since (a reverse sweep only pops). False when the position does not
    /// belong to this stack's segments.
    pub fn rewind(&mut self, regs: &mut StackRegs, position: StackPosition) -> bool {
        if !position.mapped {
            self.rewind_to_start(regs);
            return true;
        }
        let Some(seg) = self.segments.get_mut(position.segment) else {
            return false;
        };
        if position.offset > seg.words {
            return false;
        }
        let start = seg.start();
        let words = seg.words;
        self.current = position.segment;
        regs.base = start;
        // SAFETY: `offset <= words` and `words` words are mapped from `start`.
        unsafe {
            regs.top = start.add(position.offset);
            regs.end = start.add(words);
        }
        true
    }

    /// Empties the stack and unmaps every segment.
    pub fn clear(&mut self, regs: &mut StackRegs, budget: &mut MapBudget) {
        for s in self.segments.drain(..) {
            budget.release(&s);
        }
        self.current = 0;
        self.peak = 0;
        *regs = StackRegs::default();
    }

    /// Statistics given the registers.
    pub fn stats(&self, regs: &StackRegs) -> StackStats {
        let depth = self.depth(regs);
        let bytes = |spilled: bool| {
            self.segments
                .iter()
                .filter(|s| s.spilled == spilled)
                .map(|s| (s.words * WORD) as u64)
                .sum::<u64>()
        };
        let spilled = bytes(true);
        StackStats {
            pushed: regs.pushed,
            depth,
            peak: self.peak.max(depth),
            mapped_bytes: bytes(false) + spilled,
            spilled_bytes: spilled,
        }
    }
}

/// Creates a fresh, already unlinked temporary file in `dir`.
fn spill_file(dir: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("adjit-tape-{}-{n}.bin", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                // The map keeps the data alive; unlinking now guarantees the
                // file disappears even if the process is killed.
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A bump allocator in 16-byte aligned chunks; allocations are released in
/// LIFO order through marks (one mark per procedure activation), so memory is
/// bounded by the peak live size.
#[derive(Default)]
pub struct Arena {
    chunks: Vec<Vec<u128>>,
    /// Chunk being allocated from.
    current: usize,
    /// Bytes used in the current chunk.
    offset: usize,
}

/// Smallest chunk the arena allocates.
const ARENA_CHUNK_BYTES: usize = 256 << 10;
/// Bits of a mark holding the offset.
const MARK_OFFSET_BITS: u32 = 40;

impl Arena {
    /// The current allocation position, to be passed to [`Arena::release`].
    pub fn mark(&self) -> u64 {
        ((self.current as u64) << MARK_OFFSET_BITS) | self.offset as u64
    }

    /// Frees everything allocated since `mark` was taken.
    pub fn release(&mut self, mark: u64) {
        self.current = (mark >> MARK_OFFSET_BITS) as usize;
        self.offset = (mark & ((1u64 << MARK_OFFSET_BITS) - 1)) as usize;
    }

    /// Allocates `bytes` bytes filled with `fill`, 16-byte aligned. `None` when
    /// the memory cannot be obtained.
    pub fn alloc(&mut self, bytes: usize, fill: u8) -> Option<*mut u8> {
        let size = bytes.checked_add(15)? & !15;
        if size >= 1usize << MARK_OFFSET_BITS {
            return None;
        }
        let fits = |chunk: &Vec<u128>, offset: usize| offset + size <= chunk.len() * 16;
        if self.chunks.is_empty() {
            self.chunks.push(new_chunk(size)?);
            self.current = 0;
            self.offset = 0;
        }
        if !fits(&self.chunks[self.current], self.offset) {
            let next = self.current + 1;
            if next == self.chunks.len() {
                self.chunks.push(new_chunk(size)?);
            } else if !fits(&self.chunks[next], 0) {
                self.chunks[next] = new_chunk(size)?;
            }
            self.current = next;
            self.offset = 0;
        }
        let chunk = &mut self.chunks[self.current];
        // SAFETY: offset + size is within the chunk (checked above).
        let ptr = unsafe { (chunk.as_mut_ptr() as *mut u8).add(self.offset) };
        // SAFETY: `size >= bytes` bytes from ptr belong to the chunk.
        unsafe { std::ptr::write_bytes(ptr, fill, bytes) };
        self.offset += size;
        Some(ptr)
    }

    /// Bytes in use: the chunks below the current one and the current
    /// chunk's used part.
    pub fn used_bytes(&self) -> usize {
        let below: usize = self.chunks[..self.current.min(self.chunks.len())]
            .iter()
            .map(|c| c.len() * 16)
            .sum();
        below + self.offset
    }

    /// Bytes held by the arena's chunks.
    #[inline]
    pub fn reserved_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.len() * 16).sum()
    }
}

fn new_chunk(min_bytes: usize) -> Option<Vec<u128>> {
    let words = min_bytes.max(ARENA_CHUNK_BYTES) / 16;
    let mut v = Vec::new();
    v.try_reserve_exact(words).ok()?;
    v.resize(words, 0);
    Some(v)
}
