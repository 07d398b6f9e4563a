import Synchronization

/// A statement a connection keeps in a numbered slot instead of its cache keyed by SQL text:
/// for the statements every read runs, where finding one by its text (hashing and comparing
/// a few hundred bytes) cost as much as binding and stepping it.
///
/// Each slot is made once, as a `static let`, and numbered when first made, so two slots
/// never share a number and a number always means the same text.
final class StatementSlot: Sendable {
    let sql: String
    let index: Int

    private static let made = Atomic<Int>(0)

    init(_ sql: String) {
        self.sql = sql
        index = Self.made.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
