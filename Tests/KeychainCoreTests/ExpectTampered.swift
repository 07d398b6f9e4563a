import KeychainCore
import Testing

/// Records an issue unless `body` throws ``StoreError/tampered(_:)``: what the item ledger
/// reports for every edit it catches. `comment` names what must not have been served.
func expectTampered(_ body: () throws -> Void, _ comment: Comment) {
    do {
        try body()
        Issue.record("served: \(comment)")
    } catch {
        guard case .tampered = error as? StoreError else { Issue.record("expected tampered, got \(error): \(comment)"); return }
    }
}
