//! One stable sort for the runtime wasm.
//!
//! Every `sort_by` on a new element type instantiates the standard library's whole stable sort
//! (quicksort, drift sort, small-sort: about 3 KB of wasm each). Sorting index permutations
//! through [`stable_order`] keeps that to one instantiation (docs/internals.md, "Runtime size").

use std::cmp::Ordering;

/// The indices `0..len` in the order a stable sort by `compare` (on indices) would put the items:
/// equal items keep their relative order, as with `slice::sort_by`.
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
        expected.sort_by(|a, b| b.0.cmp(&a.0));
        let order = stable_order(items.len(), &|a, b| items[b].0.cmp(&items[a].0));
        assert_eq!(apply_order(items, &order), expected);
        assert!(stable_order(0, &|_, _| Ordering::Equal).is_empty());
    }
}
