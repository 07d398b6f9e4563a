/// The prompts `Unlock` hands out, and the one unlock dialog they wait on.
///
/// A prompt belongs to the client `Unlock` answered: only that client may `Prompt` or `Dismiss`
/// it, and its id is 64 random bits, so that no other client finds it by counting. Several
/// prompts share one dialog (the user is asked once); the dialog is to be cancelled as soon as
/// no prompt waits on it. Prompts are shared fairly between clients (``ClientObjects``): one
/// calling `Unlock` in a loop loses its own oldest prompts, never another client's.
struct PromptTable {
    /// The most prompts one client holds at once, and all clients together.
    static let perClient = 64
    static let total = 1_024

    /// Prompt id to whether it waits on ``dialog``.
    private var prompts: ClientObjects<Bool>
    /// The unlock dialog showing now, if any: never one that no prompt waits on.
    private(set) var dialog: UnlockDialog?

    init(perClient: Int = Self.perClient, total: Int = Self.total) {
        prompts = ClientObjects(perClient: perClient, total: total)
    }

    var isEmpty: Bool { prompts.isEmpty && dialog == nil }
    func count(ownedBy client: String) -> Int { prompts.count(ownedBy: client) }
    func contains(_ id: String) -> Bool { prompts.peek(id) != nil }

    /// What adding a prompt did: its id, the prompts reclaimed to make room (each to be
    /// completed as dismissed), and a dialog none of the rest waits on any more (to cancel).
    struct Admission {
        let id: String
        let reclaimed: [String]
        let unwantedDialog: UnlockDialog?
    }

    /// A new prompt of `client`.
    mutating func add(for client: String) -> Admission {
        var id = ItemID.make()
        while prompts.peek(id) != nil { id = ItemID.make() }
        let reclaimed = prompts.insert(false, at: id, owner: client).map(\.path)
        return Admission(id: id, reclaimed: reclaimed, unwantedDialog: reclaimed.isEmpty ? nil : dropDialogIfUnwanted())
    }

    /// Checks that `client` may `Prompt` or `Dismiss` prompt `id`.
    /// - Throws: `NoSuchObject` for no such prompt, `AccessDenied` for another client's.
    func check(_ id: String, by client: String) throws(ServiceError) {
        guard let prompt = prompts.peek(id) else { throw .noSuchObject(ObjectPath.promptPath(id)) }
        guard prompt.owner == client else { throw .init(.accessDenied, "the prompt \(ObjectPath.promptPath(id)) belongs to the client that called Unlock") }
    }

    /// Whether prompt `id` waits on the dialog already.
    func isWaiting(_ id: String) -> Bool { prompts.peek(id)?.value == true }

    /// Makes prompt `id` wait on `dialog`, the dialog showing now or, when none shows, the new one.
    mutating func wait(_ id: String, on dialog: UnlockDialog) {
        precondition(self.dialog == nil || self.dialog === dialog, "one unlock dialog at a time")
        guard prompts.update(id, { $0 = true }) else { return }
        self.dialog = dialog
    }

    /// Removes prompt `id` (completed, dismissed, failed); the dialog to cancel when no prompt
    /// waits on it any more.
    mutating func remove(_ id: String) -> UnlockDialog? {
        guard prompts.remove(id) == true else { return nil }
        return dropDialogIfUnwanted()
    }

    /// Removes the prompts of a client that left the bus; the dialog to cancel, as ``remove(_:)``.
    mutating func clientLeft(_ client: String) -> UnlockDialog? {
        let gone = prompts.removeAll(ownedBy: client)
        return gone.contains { $0.value } ? dropDialogIfUnwanted() : nil
    }

    /// Once `dialog` has ended: the prompts that waited on it (removed), or nil when it is not
    /// the dialog showing now (one cancelled earlier, ending late).
    mutating func dialogEnded(_ dialog: UnlockDialog) -> [String]? {
        guard self.dialog === dialog else { return nil }
        self.dialog = nil
        let waiting = prompts.all.filter(\.value).map(\.path)
        for id in waiting { prompts.remove(id) }
        return waiting
    }

    private mutating func dropDialogIfUnwanted() -> UnlockDialog? {
        guard let dialog, !prompts.all.contains(where: \.value) else { return nil }
        self.dialog = nil
        return dialog
    }
}
