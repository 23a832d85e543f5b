//! Tests of symbols/mod.rs: PLT stubs against objdump's, readelf's and nm's
//! names, and the sparse read against whole-file parses.

use super::*;

/// libc's PLT, whose relocations are not in its stubs' order (the
/// `IRELATIVE`s come last), and its `.plt.got` (`malloc@plt`, a
/// `GLOB_DAT` slot): every stub objdump names after a symbol
/// gets that name, and every stub objdump shows as `*ABS*+0xADDR`
/// (an ifunc's resolver) the name of an ifunc libc defines, in both
/// readers.
#[test]
fn names_libc_plt_stubs_by_their_got_slot() {
    let libc = "/lib/x86_64-linux-gnu/libc.so.6";
    let bytes = std::fs::read(libc).expect("Debian's libc");
    let run = |prog: &str, args: &[&str]| {
        let out = std::process::Command::new(prog)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{prog} (binutils): {e}"));
        assert!(out.status.success(), "{prog} {args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let ifuncs: Vec<String> = run("nm", &["-D", "--defined-only", libc])
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "i").then(|| name.split('@').next().unwrap_or(name).to_string())
        })
        .collect();
    let stubs: Vec<(u64, String)> = run("objdump", &["-d", "-j", ".plt", "-j", ".plt.got", libc])
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.split_once(" <")?;
            let name = rest.strip_suffix(">:")?.strip_suffix("@plt")?;
            Some((u64::from_str_radix(addr, 16).ok()?, name.to_string()))
        })
        .collect();
    assert!(stubs.len() > 20, "{} stubs", stubs.len());
    let (mut by_symbol, mut by_ifunc) = (0, 0);
    let whole = {
        let mut r = Reader::default();
        for (start, size, name) in goblin_functions(&bytes, 0) {
            r.push(start, size, &name);
        }
        r.finish(0)
    };
    for syms in [Symbols::from_elf(&bytes, 0), whole] {
        for (at, objdump) in &stubs {
            let ours = syms.name(*at).unwrap_or_default();
            let ours = ours
                .strip_suffix("@plt")
                .unwrap_or_else(|| panic!("{at:#x}: {ours}"));
            if objdump.starts_with("*ABS*") {
                assert!(
                    ifuncs.iter().any(|f| f == ours),
                    "{at:#x}: {ours} is no ifunc"
                );
                by_ifunc += 1;
            } else {
                assert_eq!(ours, objdump.split('@').next().unwrap(), "{at:#x}");
                by_symbol += 1;
            }
        }
    }
    assert!(by_symbol > 0 && by_ifunc > 0, "{by_symbol} {by_ifunc}");
}

/// A static glibc program's PLT (its `.plt` holds the stubs of the
/// `IRELATIVE` slots of `.rela.plt`: 8 bytes each and no `.dynsym`) and
/// a static PIE's: every stub objdump shows jumping through a slot
/// whose `IRELATIVE` addend (readelf) is an ifunc's value (nm) is named
/// after one of the ifuncs there, in both readers, and is 8 or 16
/// bytes, not part of its neighbour.
#[test]
fn names_a_static_programs_ifunc_stubs() {
    let dir = std::env::temp_dir().join(format!("hotlift-symbols-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("s.c");
    std::fs::write(
        &src,
        "#include <string.h>\n#include <stdio.h>\n\
         int main(int c, char **v) { char b[64]; strcpy(b, v[0]);\n\
         printf(\"%zu %d\\n\", strlen(b), strchr(b, 'x') != 0); return memcmp(b, v[0], 2); }\n",
    )
    .unwrap();
    let src = src.to_str().expect("a UTF-8 temporary folder");
    let tool = |prog: &str, args: &[&str]| {
        let out = std::process::Command::new(prog)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{prog}: {e}"));
        assert!(
            out.status.success(),
            "{prog} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    for (flag, stride) in [("-static", 8), ("-static-pie", 16)] {
        let exe = dir.join(format!("s{flag}"));
        let exe_ = exe.to_str().unwrap();
        tool("gcc", &[flag, "-O1", "-o", exe_, src]);
        // Slot → the resolver its IRELATIVE addend names.
        let irelative: HashMap<u64, u64> = tool("readelf", &["-rW", exe_])
            .lines()
            .filter(|l| l.contains("R_X86_64_IRELATIVE"))
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let hex = |s: &str| u64::from_str_radix(s, 16).ok();
                Some((hex(f.first()?)?, hex(f.last()?)?))
            })
            .collect();
        let mut ifuncs: HashMap<u64, Vec<String>> = HashMap::new();
        for l in tool("nm", &[exe_]).lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if let [value, "i", name] = f[..] {
                let v = u64::from_str_radix(value, 16).unwrap();
                ifuncs.entry(v).or_default().push(name.to_string());
            }
        }
        // `  401018:\tff 25 ..\tjmp *0xa2fe2(%rip)  # 4a4000 <...>`
        let stubs: Vec<(u64, u64)> = tool("objdump", &["-d", "-j", ".plt", exe_])
            .lines()
            .filter(|l| l.contains("jmp") && l.contains("(%rip)"))
            .filter_map(|l| {
                let (at, rest) = l.trim_start().split_once(':')?;
                let slot = rest.split("# ").nth(1)?.split_whitespace().next()?;
                let at = u64::from_str_radix(at, 16).ok()?;
                Some((at, u64::from_str_radix(slot, 16).ok()?))
            })
            .collect();
        let bytes = std::fs::read(&exe).unwrap();
        let whole = {
            let mut r = Reader::default();
            for (start, size, name) in goblin_functions(&bytes, 0) {
                r.push(start, size, &name);
            }
            r.finish(0)
        };
        let mut named = 0;
        for syms in [Symbols::from_elf(&bytes, 0), whole] {
            for &(at, slot) in &stubs {
                let Some(resolver) = irelative.get(&slot) else {
                    continue; // a dynamic PLT's header
                };
                let names = &ifuncs[resolver];
                // The stub starts at its jump (or where its 16 bytes do).
                let start = at & !(stride - 1);
                let ours = syms.name(start).unwrap_or_default();
                let ours = ours
                    .strip_suffix("@plt")
                    .unwrap_or_else(|| panic!("{flag} {start:#x}: {ours}"));
                assert!(
                    names.iter().any(|n| n == ours),
                    "{flag} {start:#x}: {ours} is not one of {names:?}"
                );
                assert_eq!(
                    syms.name(start + stride - 1),
                    Some(format!("{ours}@plt+{:#x}", stride - 1)),
                    "{flag}"
                );
                named += 1;
            }
        }
        assert!(named >= 6, "{flag}: {named} stubs named ({stubs:?})");
        // The sparse read names them too, and both readers agree on
        // every symbol.
        let all = Symbols::from_elf(&bytes, 0).entries();
        let sparse = read_for_symbols(&exe).unwrap();
        assert_eq!(Symbols::from_elf(&sparse, 0).entries(), all, "{flag}");
        let mut oracle = goblin_functions(&bytes, 0);
        oracle.sort_unstable();
        oracle.dedup_by_key(|f| f.0);
        assert_eq!(oracle, all, "{flag}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// This test program's own PLT: every entry is named after a function.
#[test]
fn names_plt_entries() {
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let syms = Symbols::from_elf(&exe, 0);
    let all = syms.entries();
    let plt: Vec<&(u64, u64, String)> = all.iter().filter(|f| f.2.ends_with("@plt")).collect();
    assert!(!plt.is_empty(), "no PLT entries found");
    let (at, _, name) = plt[0];
    assert_eq!(syms.name(*at).as_deref(), Some(name.as_str()));
    assert_eq!(syms.name(at + 4), Some(format!("{name}+0x4")));
    // Offsets as `{:#x}` writes them, within the function.
    let (start, size, name) = all.iter().find(|f| f.1 > 0x1000).expect("a large function");
    for off in [1, 0xa, 0xf, 0x10, 0x9f0, 0xfff] {
        assert!(off < *size);
        assert_eq!(syms.name(start + off), Some(format!("{name}+{off:#x}")));
    }
}

/// The sparse read gives the symbols a whole read gives, and those are
/// the symbols goblin's whole parse gives, for every ELF file of the
/// system's library and program directories (at most 300 of each:
/// shared libraries, PIEs, static programs, stripped or not, with and
/// without a `.plt.sec`) and separate debug files.
#[test]
fn symbols_from_the_sparse_read_are_the_whole_files() {
    let mut checked = 0;
    for dir in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/bin",
        "/usr/lib/debug/.build-id",
    ] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        // The debug directory's files are one level down (xx/yyyy.debug).
        let paths = entries
            .flatten()
            .flat_map(|e| match std::fs::read_dir(e.path()) {
                Ok(inner) => inner.flatten().map(|i| i.path()).collect(),
                Err(_) => vec![e.path()],
            });
        for path in paths.take(300) {
            let Ok(whole) = std::fs::read(&path) else {
                continue;
            };
            if !whole.starts_with(b"\x7fELF") || whole.get(4) != Some(&2) {
                continue;
            }
            let sparse = read_for_symbols(&path).unwrap();
            let (a, b) = (
                Symbols::from_elf(&whole, 0x1000),
                Symbols::from_elf(&sparse, 0x1000),
            );
            assert_eq!(a.entries(), b.entries(), "{}", path.display());
            // The section-header reading finds what goblin's whole
            // parse finds.
            let mut oracle = goblin_functions(&whole, 0x1000);
            oracle.sort_unstable();
            oracle.dedup_by_key(|f| f.0);
            assert_eq!(a.entries(), oracle, "{}", path.display());
            assert_eq!(
                file_build_id(&whole),
                file_build_id(&sparse),
                "{}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} ELF files checked");
}

/// The cache directory's form of libc's table (with its debug file's
/// symbols when installed) reads back equal at another base, aliases
/// included; damaged forms read as nothing, never as another table.
#[test]
fn a_table_reads_back_from_its_bytes_at_any_base() {
    let libc = std::path::Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    let bytes = read_for_symbols(libc).expect("Debian's libc");
    let syms = Symbols::from_file(&bytes, 0x7f00_0000_0000, file_build_id(&bytes).as_deref());
    assert!(syms.funcs.len() > 1000, "{} functions", syms.funcs.len());
    let b = syms.to_bytes();
    let back = Symbols::from_bytes(&b, 0x5500_0000_0000).expect("its own bytes");
    let moved = |s: &Symbols| -> Vec<(u64, u64, String)> {
        s.functions()
            .map(|(a, n, name)| (a - s.base, n, name.to_string()))
            .collect()
    };
    assert_eq!(moved(&back), moved(&syms));
    assert_eq!(
        back.address_of("__libc_malloc").map(|a| a - back.base),
        syms.address_of("__libc_malloc").map(|a| a - syms.base)
    );
    assert!(Symbols::from_bytes(&b[..b.len() - 1], 0).is_none());
    assert!(Symbols::from_bytes(&b[..11], 0).is_none());
    let mut far = b.clone();
    // The first function's name starts past the names.
    far[12 + 16..12 + 20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(Symbols::from_bytes(&far, 0).is_none());
}
