/// What a Secret Service batch has changed so far, so that a failure can put it back: the
/// Secret Service has no transactions. Each entry holds what restores the very object that
/// changed (an update that moved an item to another identity is undone on that item, never by
/// creating a second one), with its exact attributes, label, secret and content type.
struct SecretServiceJournal {
    enum Step {
        /// An item this batch created (a reference owned by the journal).
        case created(LibSecret.Pointer)
        /// An item this batch changed (a reference owned by the journal), and what it was.
        case changed(LibSecret.Pointer, raw: [String: String], label: String, secret: SecretServiceStore.StoredSecret)
        /// An item this batch deleted, as it was.
        case deleted(raw: [String: String], label: String, secret: SecretServiceStore.StoredSecret)
    }

    let library: LibSecret
    private(set) var steps: [Step] = []

    init(library: LibSecret) { self.library = library }

    mutating func created(_ item: LibSecret.Pointer) { steps.append(.created(item)) }

    mutating func changed(_ match: SecretServiceStore.Match, secret: SecretServiceStore.StoredSecret) {
        steps.append(.changed(library.objectRef(match.item) ?? match.item, raw: match.raw, label: match.label, secret: secret))
    }

    mutating func deleted(_ match: SecretServiceStore.Match, secret: SecretServiceStore.StoredSecret) {
        steps.append(.deleted(raw: match.raw, label: match.label, secret: secret))
    }

    /// Drops the journal's references.
    func release() {
        for step in steps {
            switch step {
            case .created(let item), .changed(let item, _, _, _): library.objectUnref(item)
            case .deleted: break
            }
        }
    }

    /// Undoes every step, newest first, after `error` stopped the batch; the error to report.
    /// When the store stopped answering (the deadline passed) nothing can be undone in time,
    /// and the report says what was left applied; when an undo fails, the batch is
    /// ``StoreError/partlyApplied(_:)``, never silently.
    func rollBack(after error: StoreError, timeLeft: Bool, undo: (Step) throws(StoreError) -> Void) -> StoreError {
        guard !steps.isEmpty else { return error }
        if case .outcomeUnknown(let why) = error {
            return .outcomeUnknown("\(why); the \(steps.count) change(s) this batch made before it could not be undone in time")
        }
        guard timeLeft else {
            return .partlyApplied("\(error.description) The batch's \(steps.count) earlier change(s) stay applied: no time was left to undo them")
        }
        var failed: [StoreError] = []
        for step in steps.reversed() {
            do { try undo(step) } catch let undoError { failed.append(undoError) }
        }
        guard let first = failed.first else { return error }
        return .partlyApplied("\(error.description) Undoing the batch's \(steps.count) earlier change(s) failed for \(failed.count) of them (\(first.description))")
    }
}
