import Testing

@testable import KeychainCore

/// The ledger as one connection last verified it, on its own, without a vault file: what
/// still holds when the file's `data_version` moves, and what is forgotten.
@Suite("The verified ledger: what holds until another connection commits")
struct VerifiedLedgerTests {
    @Test("what was verified holds at its data version only; forgetting it makes the next use check afresh")
    func holdsAtItsDataVersionOnly() {
        var ledger = Ledger()
        #expect(!ledger.holds(at: 7, format: 3) && !ledger.wasVerified, "nothing verified yet")
        #expect(!ledger.holds(at: 7, format: 1), "a format-1 vault is read once too")
        ledger.adopt(LedgerRoot.empty, recordVanished: false)
        ledger.verified(at: 7)
        #expect(ledger.holds(at: 7, format: 3))
        #expect(!ledger.holds(at: 8, format: 3), "another connection committed")
        let wasVerified = ledger.reload()
        #expect(wasVerified, "it was verified before: what open checked is checked again")
        #expect(!ledger.holds(at: 7, format: 3) && ledger.wasVerified, "a ledger being re-read is not held")
        #expect(ledger.holds(at: 7, format: 1), "format 1 has no ledger to hold")
        ledger.forget()
        #expect(!ledger.wasVerified && !ledger.holds(at: 7, format: 1))
    }

    @Test("a scope-index lookup stays confirmed until the data version moves")
    func scopeLookupsLastOneDataVersion() {
        var ledger = Ledger()
        ledger.adopt(LedgerRoot.empty, recordVanished: false)
        ledger.verified(at: 3)
        ledger.confirm(lookup: [1, 2])
        #expect(ledger.confirmed(lookup: [1, 2]) && !ledger.confirmed(lookup: [3]))
        ledger.verified(at: 4)
        #expect(!ledger.confirmed(lookup: [1, 2]), "another connection's commit may have changed the index")
        ledger.confirm(lookup: [3])
        #expect(ledger.confirmed(lookup: [3]) && !ledger.confirmed(lookup: [1, 2]))
    }
}
