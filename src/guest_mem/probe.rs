//! Loads of guest code that survive a fault (guest_mem G2).
//!
//! Memory the guest's mappings say is executable can still fault when it
//! is read: the pages of a file mapping past the file's end raise SIGBUS
//! (the file was short, or `ftruncate`d later), and another guest thread
//! may unmap the range while hotlift decodes it. Natively the guest's
//! fetch from such a page gets the signal; hotlift's read of it, done by
//! the translator for the guest, must not.
//!
//! P1: every word of guest code hotlift reads is loaded by the one load
//!     instruction of `hotlift_load_words`; a SIGSEGV or SIGBUS the kernel
//!     raises for that instruction (si_code > 0) resumes at its fixup
//!     ([`fixup`], asked first by the host signal handler), which returns
//!     how many words were copied before the fault.
//! P2: the loads are plain 8-byte aligned `mov`s, as relaxed atomic loads
//!     are on x86-64 (G2: other guest threads may be storing there).
//!
//! Usage: `load_words(addr, &mut buf)`; the signal layer calls
//! `fixup(pc)` for a fault signal before anything else.
#![allow(unsafe_code)]

use std::arch::global_asm;

global_asm!(
    ".pushsection .text.hotlift_load_words,\"ax\",@progbits",
    ".globl hotlift_load_words",
    ".type hotlift_load_words,@function",
    // rdi: source words, rsi: destination, rdx: how many. Returns in rax
    // how many were copied.
    "hotlift_load_words:",
    "    xor eax, eax",
    "2:  cmp rax, rdx",
    "    jae 3f",
    ".globl hotlift_load_words_insn",
    "hotlift_load_words_insn:",
    "    mov rcx, qword ptr [rdi + rax*8]",
    "    mov qword ptr [rsi + rax*8], rcx",
    "    inc rax",
    "    jmp 2b",
    "3:  ret",
    // P1: the load faulted; rax is the words copied before it.
    ".globl hotlift_load_words_fixup",
    "hotlift_load_words_fixup:",
    "    ret",
    ".size hotlift_load_words, . - hotlift_load_words",
    ".popsection",
);

extern "C" {
    fn hotlift_load_words(src: *const u64, dst: *mut u64, n: usize) -> usize;
    fn hotlift_load_words_insn();
    fn hotlift_load_words_fixup();
}

/// Copy the words at `addr` (8-byte aligned, any address) into `buf`:
/// how many were copied before the first whose load faulted (P1),
/// `buf.len()` when none did.
pub fn load_words(addr: u64, buf: &mut [u64]) -> usize {
    debug_assert_eq!(addr % 8, 0);
    // SAFETY: the routine stores only into `buf`'s words and loads from
    // `addr` on, where a fault resumes at its fixup (P1).
    unsafe { hotlift_load_words(addr as *const u64, buf.as_mut_ptr(), buf.len()) }
}

/// P1: where a fault at host `pc` resumes, if `pc` is the probe's load.
pub fn fixup(pc: u64) -> Option<u64> {
    (pc == hotlift_load_words_insn as *const () as u64)
        .then_some(hotlift_load_words_fixup as *const () as u64)
}

/// Is the word at `addr` (any address) readable now?
pub fn readable(addr: u64) -> bool {
    load_words(addr & !7, &mut [0]) == 1
}
