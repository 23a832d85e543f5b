//! Finding the profiled function in an ELF image: its start and extent
//! from the symbol tables (`.symtab`, `.dynsym`), relocated by the image's
//! load bias.

use goblin::elf::sym::STT_GNU_IFUNC;
use goblin::elf::Elf;

/// A function of an image: `[start, end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub start: u64,
    pub end: u64,
}

/// Function symbols of `bytes`: (address, size, name), sorted.
fn functions(bytes: &[u8], bias: u64) -> Vec<(u64, u64, String)> {
    let Ok(elf) = Elf::parse(bytes) else {
        return Vec::new();
    };
    let mut funcs = Vec::new();
    for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
        for s in syms.iter() {
            let func = s.is_function() || s.st_type() == STT_GNU_IFUNC;
            if func && s.st_value != 0 {
                if let Some(name) = strs.get_at(s.st_name) {
                    funcs.push((bias.wrapping_add(s.st_value), s.st_size, name.to_string()));
                }
            }
        }
    }
    funcs.sort();
    funcs
}

/// The extent of the function at `start` of size `size` among `funcs`:
/// its size, or up to the next function when the size is 0.
fn extent(funcs: &[(u64, u64, String)], start: u64, size: u64) -> u64 {
    if size != 0 {
        return start + size;
    }
    funcs
        .iter()
        .map(|f| f.0)
        .find(|&a| a > start)
        .unwrap_or(u64::MAX)
}

/// Function symbols of an image file and of its separate debug file
/// (`/usr/lib/debug/.build-id/xx/yyyy.debug`, which names the local
/// functions a stripped library leaves out), when one is installed.
pub fn image_functions(
    bytes: &[u8],
    bias: u64,
    build_id: Option<&[u8]>,
) -> Vec<(u64, u64, String)> {
    let mut funcs = functions(bytes, bias);
    if let Some(id) = build_id.filter(|id| id.len() >= 2) {
        let hex = hex::encode(id);
        let debug = format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..]);
        if let Ok(dbg) = std::fs::read(debug) {
            funcs.extend(functions(&dbg, bias));
            funcs.sort();
        }
    }
    funcs
}

/// The function named `name` among an image's functions; without one of
/// that exact name, the one copy GCC made of it under a clone suffix
/// (`sumsq.constprop.0`, `.isra.0`, `.part.0`: the optimiser's version
/// the program runs), its hot part preferred to a `.cold` one.
pub fn by_name_in(funcs: &[(u64, u64, String)], name: &str) -> Option<Found> {
    let exact = funcs.iter().find(|f| f.2 == name);
    let clone = || {
        let clones: Vec<&(u64, u64, String)> = funcs
            .iter()
            .filter(|f| {
                f.2.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(clone_suffix)
            })
            .collect();
        let hot: Vec<_> = clones.iter().filter(|f| !f.2.contains(".cold")).collect();
        match hot.as_slice() {
            [one] => Some(**one),
            _ => None,
        }
    };
    let (start, size, found) = exact.or_else(clone)?;
    Some(Found {
        name: found.clone(),
        start: *start,
        end: extent(funcs, *start, *size),
    })
}

/// The function starting at `addr` (or containing it) in `bytes`.
pub fn by_addr(bytes: &[u8], bias: u64, addr: u64) -> Option<Found> {
    let funcs = functions(bytes, bias);
    let f = funcs
        .iter()
        .rev()
        .find(|f| f.0 <= addr && (f.1 == 0 || addr < f.0 + f.1))?;
    let end = extent(&funcs, f.0, f.1);
    Some(Found {
        name: f.2.clone(),
        start: addr,
        end,
    })
}

/// What follows `NAME.` in a compiler's clone of function `NAME`.
fn clone_suffix(rest: &str) -> bool {
    ["constprop.", "isra.", "part.", "lto_priv.", "cold"]
        .iter()
        .any(|c| rest.starts_with(c))
}

/// `n` without a clone's suffix (`sumsq.constprop.0`: `sumsq`).
fn stem(n: &str) -> &str {
    n.match_indices('.')
        .find(|&(i, _)| clone_suffix(&n[i + 1..]))
        .map_or(n, |(i, _)| &n[..i])
}

/// Up to five names like `name`: holding it (its clones,
/// `name.constprop.0`, when it has more than one), or a few edits from it
/// or from a clone's function.
fn close_to(name: &str, names: &mut Vec<String>) -> Vec<String> {
    names.sort();
    names.dedup();
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|n| {
            let long = name.len() >= 4 && n.len() >= 4;
            let clone = n.strip_prefix(name).is_some_and(|r| r.starts_with('.'));
            if clone || long && (n.contains(name) || name.contains(n.as_str())) {
                return Some((0, n));
            }
            let d = strsim::levenshtein(name, n).min(strsim::levenshtein(name, stem(n)));
            (d <= (name.len() / 4).max(1)).then_some((d, n))
        })
        .collect();
    scored.sort_by_key(|&(d, n)| (d, n.len(), n.clone()));
    scored.into_iter().take(5).map(|(_, n)| n.clone()).collect()
}

/// What an error naming a missing function `name` adds about `names`
/// (every function looked at): ` (close matches: a, b)`, or nothing.
pub fn close_matches(name: &str, names: &mut Vec<String>) -> String {
    let close = close_to(name, names);
    if close.is_empty() {
        String::new()
    } else {
        format!(" (close matches: {})", close.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_finds_its_only_clone() {
        let f = |a: u64, n: &str| (a, 0x10, n.to_string());
        let funcs = vec![
            f(0x1000, "sumsq.constprop.0"),
            f(0x1100, "sumsq.cold"),
            f(0x1200, "work"),
            f(0x1300, "work.isra.0"),
            f(0x1400, "two.part.0"),
            f(0x1500, "two.part.1"),
            f(0x1600, "sumsquare"),
        ];
        let at = |n: &str| by_name_in(&funcs, n).map(|x| (x.name, x.start));
        assert_eq!(at("sumsq"), Some(("sumsq.constprop.0".into(), 0x1000)));
        assert_eq!(at("work"), Some(("work".into(), 0x1200)), "exact first");
        assert_eq!(at("two"), None, "two clones: ambiguous");
        assert_eq!(at("sums"), None, "a prefix is not a clone");
        assert_eq!(at("sumsq.cold"), Some(("sumsq.cold".into(), 0x1100)));
        let mut names: Vec<String> = funcs.iter().map(|f| f.2.clone()).collect();
        assert_eq!(
            close_matches("two", &mut names),
            " (close matches: two.part.0, two.part.1)"
        );
        assert_eq!(
            close_matches("sumsquar", &mut names),
            " (close matches: sumsquare)"
        );
        assert_eq!(close_matches("nothing_like_it", &mut names), "");
        // A few edits from a clone's function: the clone.
        assert_eq!(
            close_matches("sumsqq", &mut names),
            " (close matches: sumsq.cold, sumsq.constprop.0)"
        );
        assert_eq!(stem("a.b.isra.0"), "a.b");
    }
}
