public extension Dictionary {
    /// The pairs whose value is not nil.
    init(withoutOptionalValues initial: [Key: Value?]) {
        self = initial.compactMapValues { $0 }
    }

    /// A dictionary of the pairs (a later key replaces an earlier one).
    init(pairs: [(Key, Value)]) {
        self.init(pairs, uniquingKeysWith: { $1 })
    }

    /// `initial` with `toMerge` on top (its values win).
    init(initial: [Key: Value], toMerge: [Key: Value]) {
        self = initial.merging(toMerge) { $1 }
    }
}
