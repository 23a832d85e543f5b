//! Function names as people read them: C++ (Itanium ABI) and Rust (legacy
//! and v0) symbols demangled in every output that names functions.
//!
//! I1: a profile keeps names as the symbol tables spell them (mangled):
//!     demangling is display, so a profile read again, diffed or exported
//!     keeps every name and `--no-demangle` gives them back raw.
//! I2: [`display`] is the one place a name is turned into what is shown;
//!     what hotlift appends to a symbol (`+0x12` offsets, `@plt`) and
//!     names that are not mangled pass through unchanged. Rust's legacy
//!     mangling (`_ZN…17h<hash>E`) is Itanium-shaped: it is tried first,
//!     and shown without its hash.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

static RAW: AtomicBool = AtomicBool::new(false);

/// `--no-demangle`: show names as the symbol tables spell them.
pub fn keep_raw(raw: bool) {
    RAW.store(raw, Ordering::Relaxed);
}

/// Whether names are shown raw (for a new image to inherit).
pub fn raw() -> bool {
    RAW.load(Ordering::Relaxed)
}

/// `name` as it is shown (I2).
pub fn display(name: &str) -> Cow<'_, str> {
    if raw() {
        return Cow::Borrowed(name);
    }
    // What hotlift appended: an offset into the function, or a PLT stub.
    let (sym, tail) = match name.rfind(['+', '@']) {
        Some(i) if i > 0 => name.split_at(i),
        _ => (name, ""),
    };
    match demangle(sym) {
        Some(d) => Cow::Owned(d + tail),
        None => Cow::Borrowed(name),
    }
}

/// The demangled form of a mangled symbol, None for any other name.
fn demangle(sym: &str) -> Option<String> {
    if !(sym.starts_with("_Z") || sym.starts_with("_R") || sym.starts_with("__Z")) {
        return None;
    }
    if let Ok(d) = rustc_demangle::try_demangle(sym) {
        // `{:#}` leaves out the legacy scheme's hash.
        return Some(format!("{d:#}"));
    }
    let s = cpp_demangle::Symbol::new(sym).ok()?;
    s.demangle().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_and_rust_and_keeps_what_hotlift_appends() {
        assert_eq!(
            display("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE12_M_constructEmc"),
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct(unsigned long, char)"
        );
        assert_eq!(display("_ZN1r4work17h1eab6cb397fdfa44E"), "r::work");
        assert_eq!(display("_RNvCs1234_5crate4work"), "crate::work");
        assert_eq!(display("_Z3addii+0x1c"), "add(int, int)+0x1c");
        assert_eq!(display("_Z3addii@plt"), "add(int, int)@plt");
        assert_eq!(
            display("_Z3addii.constprop.0"),
            "add(int, int) [clone .constprop.0]"
        );
        for plain in [
            "main",
            "printf@plt",
            "sumsq+0x10",
            "_start",
            "__libc_start_main",
            "?",
        ] {
            assert_eq!(display(plain), plain);
        }
        assert_eq!(display("_Znot a symbol"), "_Znot a symbol");
    }
}
