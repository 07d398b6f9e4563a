/// What applying received changes did (``JournaledVault/applyReceived(_:state:)``).
struct ApplyResult: Equatable {
    var applied = 0
    /// Older than what this vault has (or the same change again).
    var superseded = 0
    /// Changes no device of ours makes: an item that may not travel.
    var refused = 0
    /// The items (``SyncUnit``) that appeared, changed or went.
    var arrived: [SyncArrival] = []
}
