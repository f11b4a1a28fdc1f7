//! One stable sort for the runtime wasm.
//!
//! Every `sort_by` on a new element type instantiates the standard library's whole stable sort
//! (drift sort and its small-sort: about 3.5 KB of wasm each), and so does collecting into a
//! `BTreeMap`/`BTreeSet` (`from_iter` sorts its input). Sorting index permutations through
//! [`stable_order`] keeps one instantiation of it (on `usize` with a `dyn` comparator) for the
//! whole runtime module (docs/internals.md, "Runtime size").

use std::cmp::Ordering;

/// The indices `0..len` in the order a stable sort by `compare` (on indices) would put the items:
/// equal items keep their relative order, as with `slice::sort_by` (which does the sorting).
pub fn stable_order(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|a, b| compare(*a, *b));
    order
}

/// `items` rearranged into `order` (a permutation of their indices, from [`stable_order`]).
pub fn apply_order<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.iter().filter_map(|index| slots.get_mut(*index).and_then(Option::take)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_stable_sort_by() {
        let items = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e'), (3, 'f')];
        let mut expected = items.clone();
        expected.sort_by_key(|item| std::cmp::Reverse(item.0));
        let order = stable_order(items.len(), &|a, b| items[b].0.cmp(&items[a].0));
        assert_eq!(apply_order(items, &order), expected);
        assert!(stable_order(0, &|_, _| Ordering::Equal).is_empty());
    }

    #[test]
    fn matches_a_stable_sort_by_on_every_length() {
        // Lengths around the powers of two the merge widths cross; keys with many ties.
        for len in 0..70usize {
            let items: Vec<(usize, usize)> = (0..len).map(|i| ((i * 7919 + len) % 5, i)).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|item| item.0);
            let order = stable_order(items.len(), &|a, b| items[a].0.cmp(&items[b].0));
            assert_eq!(apply_order(items, &order), expected, "len {len}");
        }
    }
}
