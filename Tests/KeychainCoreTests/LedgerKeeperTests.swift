import Testing

@testable import KeychainCore

/// The ledger keeper (``Ledger``) on its own, without a vault file: the rules it keeps of when
/// the held ledger changes, which the vault only calls at the right moment of its transaction.
@Suite("The ledger keeper: when the held ledger advances, is checked, and is let go")
struct LedgerKeeperTests {
    static let element = [UInt8](repeating: 7, count: Digest.size)
    static let emptyTally = LedgerTally(count: 0, digest: [UInt8](repeating: 0, count: Digest.size))

    @Test("a pass over every row verifies the shards that agree, even beside one that does not, and holds its tallies only when all agree")
    func aPassVerifiesTheShardsThatAgree() {
        var ledger = Ledger()
        ledger.adopt(LedgerRoot.empty, recordVanished: false)
        let total = ledger.state!.shardCount
        var found = LedgerTallies(count: total)
        var stored = LedgerTallies(count: total)
        found.count(Self.element, at: 3, inserted: true)
        let disagreed = ledger.passed(found: found, stored: stored)
        #expect(!disagreed, "shard 3 holds a row its record does not vouch for")
        #expect(!ledger.state!.isVerified(3) && ledger.state!.isVerified(2) && ledger.state!.unverified == 1)
        #expect(!ledger.state!.isLoaded, "tallies that disagree are not taken as the stored ones")
        stored.count(Self.element, at: 3, inserted: true)
        let agreed = ledger.passed(found: found, stored: stored)
        #expect(agreed)
        #expect(ledger.state!.unverified == 0 && ledger.state!.isLoaded && ledger.state!.tallies == found)
    }

    @Test("a write counts only into a shard it verified, stores the next generation, and the next write is one later")
    func aWriteAdvancesTheGeneration() {
        var ledger = Ledger()
        #expect(ledger.nextGeneration == nil, "no ledger held: no write may run")
        ledger.adopt(ItemLedger(generation: 5, tally: Self.emptyTally), recordVanished: false)
        #expect(ledger.nextGeneration == 6)
        let unchecked = ledger.count(Self.element, shard: 0, inserted: true)
        #expect(!unchecked, "the shard's rows were not checked")
        ledger.markVerified(0)
        let counted = ledger.count(Self.element, shard: 0, inserted: true)
        #expect(counted)
        ledger.stored(at: 6, boot: BootIdentity.none)
        #expect(ledger.nextGeneration == 7 && ledger.state!.tallies[0].count == 1)
        ledger.forget()
        let countedAfter = ledger.count(Self.element, shard: 0, inserted: false)
        #expect(ledger.nextGeneration == nil && !countedAfter, "a rolled-back write leaves nothing to count into")
    }

    @Test("a format-3 write stamps the groups it changed with its generation, and only those")
    func aWriteStampsTheGroupsItChanged() {
        var ledger = Ledger()
        ledger.adopt(LedgerRoot.empty, recordVanished: false)
        let shard = LedgerShards.shard(of: [0x80, 0])
        let group = LedgerShards.group(of: shard)
        let neither = ledger.count(Self.element, shard: shard, inserted: true)
        #expect(!neither, "neither checked nor loaded")
        ledger.markVerified(shard)
        let unloaded = ledger.count(Self.element, shard: shard, inserted: true)
        #expect(!unloaded, "its group's tallies are not loaded")
        ledger.load(LedgerTallies(count: ledger.state!.shards(ofGroup: group).count), ofGroup: group)
        let counted = ledger.count(Self.element, shard: shard, inserted: true)
        #expect(counted && ledger.state!.changedGroups == [group])
        ledger.stored(at: 1, boot: BootIdentity.none)
        #expect(ledger.state!.root!.generation(ofGroup: group) == 1 && ledger.state!.root!.generation(ofGroup: group == 0 ? 1 : 0) == 0)
        #expect(ledger.state!.changedGroups.isEmpty, "the next write starts with nothing changed")
    }

    @Test("an upgrade starts over empty, and a recount verifies every shard and changes those holding rows")
    func anUpgradeStartsOverAndRecounts() {
        var ledger = Ledger()
        ledger.adopt(ItemLedger(generation: 9, tally: Self.emptyTally), recordVanished: false)
        ledger.startOver(groups: LedgerShards.groupCount(format: 4))
        #expect(ledger.state!.isScoped && ledger.state!.unverified == ledger.state!.shardCount)
        var found = LedgerTallies(count: ledger.state!.shardCount)
        found.count(Self.element, at: 0, inserted: true)
        ledger.recount(found)
        #expect(ledger.state!.unverified == 0 && ledger.state!.tallies == found)
        #expect(ledger.state!.changedGroups == [0], "only the group holding a row needs a record")
    }

    @Test("a ledger whose record vanished waits for it; the record's return ends the wait")
    func aVanishedRecordIsHeldUntilItReturns() {
        var ledger = Ledger()
        ledger.adopt(LedgerRoot.empty, recordVanished: true)
        #expect(ledger.state!.recordVanished)
        ledger.recordReturned()
        #expect(!ledger.state!.recordVanished)
    }

    @Test("reading it again lets the held ledger go but remembers that one was verified")
    func reloadingRemembersItWasVerified() {
        var ledger = Ledger()
        let neverVerified = ledger.reload()
        #expect(!neverVerified, "nothing verified yet: open's checks stand")
        ledger.adopt(LedgerRoot.empty, recordVanished: false)
        ledger.verified(at: 4)
        let verifiedBefore = ledger.reload()
        #expect(verifiedBefore && ledger.state == nil && ledger.nextGeneration == nil)
    }
}
