//! Argument storage shared by the interpreter and compiled code: one typed,
//! contiguous, column-major buffer per procedure argument.
//!
//! Host-side storage only: it knows the IR's types, not how the interpreter
//! or compiled code address it.

use crate::ir::Type;

/// The storage of one argument (a scalar is a buffer of length 1; a
/// CHARACTER variable is its bytes).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    /// REAL(4) data.
    F32(Vec<f32>),
    /// REAL(8) data.
    F64(Vec<f64>),
    /// INTEGER(4) data.
    I32(Vec<i32>),
    /// INTEGER(8) data.
    I64(Vec<i64>),
    /// LOGICAL data, one byte (0 or 1) per element.
    Bool(Vec<u8>),
    /// CHARACTER data, `len` bytes per element.
    Char(Vec<u8>),
}

impl Buffer {
    /// A zero buffer of `len` elements, or why the memory cannot be had:
    /// sizes that come from a program use this, so that a huge one is an
    /// error instead of an abort of the process.
    pub fn try_zeros(ty: Type, len: usize) -> Result<Buffer, String> {
        fn filled<T: Clone>(len: usize, x: T) -> Result<Vec<T>, String> {
            let mut v = Vec::new();
            v.try_reserve_exact(len).map_err(|e| {
                format!(
                    "cannot allocate {len} elements of {} bytes: {e}",
                    std::mem::size_of::<T>()
                )
            })?;
            v.resize(len, x);
            Ok(v)
        }
        Ok(match ty {
            Type::F32 => Buffer::F32(filled(len, 0.0)?),
            Type::F64 => Buffer::F64(filled(len, 0.0)?),
            Type::I32 => Buffer::I32(filled(len, 0)?),
            Type::I64 => Buffer::I64(filled(len, 0)?),
            Type::Bool => Buffer::Bool(filled(len, 0)?),
            Type::Char => Buffer::Char(filled(len, b' ')?),
        })
    }

    /// A zero-filled (blank for characters) buffer of `len` elements of
    /// `ty` (for `Char`, `len` is the number of bytes).
    pub fn zeros(ty: Type, len: usize) -> Buffer {
        match ty {
            Type::F32 => Buffer::F32(vec![0.0; len]),
            Type::F64 => Buffer::F64(vec![0.0; len]),
            Type::I32 => Buffer::I32(vec![0; len]),
            Type::I64 => Buffer::I64(vec![0; len]),
            Type::Bool => Buffer::Bool(vec![0; len]),
            Type::Char => Buffer::Char(vec![b' '; len]),
        }
    }
    /// The element type.
    #[inline]
    pub fn ty(&self) -> Type {
        match self {
            Buffer::F32(_) => Type::F32,
            Buffer::F64(_) => Type::F64,
            Buffer::I32(_) => Type::I32,
            Buffer::I64(_) => Type::I64,
            Buffer::Bool(_) => Type::Bool,
            Buffer::Char(_) => Type::Char,
        }
    }
    /// Number of elements (bytes for `Char`).
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Buffer::F32(v) => v.len(),
            Buffer::F64(v) => v.len(),
            Buffer::I32(v) => v.len(),
            Buffer::I64(v) => v.len(),
            Buffer::Bool(v) | Buffer::Char(v) => v.len(),
        }
    }
    /// True when the buffer holds no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element `i` as f64 (integers and logicals converted; characters give
    /// their byte value).
    #[inline]
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Buffer::F32(v) => v[i] as f64,
            Buffer::F64(v) => v[i],
            Buffer::I32(v) => v[i] as f64,
            Buffer::I64(v) => v[i] as f64,
            Buffer::Bool(v) | Buffer::Char(v) => v[i] as f64,
        }
    }
    /// Sets element `i` from an f64 (rounded to the element type; integers
    /// truncate).
    #[inline]
    pub fn set_f64(&mut self, i: usize, x: f64) {
        match self {
            Buffer::F32(v) => v[i] = x as f32,
            Buffer::F64(v) => v[i] = x,
            Buffer::I32(v) => v[i] = x as i32,
            Buffer::I64(v) => v[i] = x as i64,
            Buffer::Bool(v) => v[i] = (x != 0.0) as u8,
            Buffer::Char(v) => v[i] = x as u8,
        }
    }
    /// Raw pointer to the first byte, for reading at the native boundary.
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            Buffer::F32(v) => v.as_ptr() as *const u8,
            Buffer::F64(v) => v.as_ptr() as *const u8,
            Buffer::I32(v) => v.as_ptr() as *const u8,
            Buffer::I64(v) => v.as_ptr() as *const u8,
            Buffer::Bool(v) | Buffer::Char(v) => v.as_ptr(),
        }
    }
    /// Raw pointer to the first byte, for the native call boundary.
    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Buffer::F32(v) => v.as_mut_ptr() as *mut u8,
            Buffer::F64(v) => v.as_mut_ptr() as *mut u8,
            Buffer::I32(v) => v.as_mut_ptr() as *mut u8,
            Buffer::I64(v) => v.as_mut_ptr() as *mut u8,
            Buffer::Bool(v) | Buffer::Char(v) => v.as_mut_ptr(),
        }
    }
}
