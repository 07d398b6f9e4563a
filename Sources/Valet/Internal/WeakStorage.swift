import Foundation

/// One live instance per key, held weakly: equal configurations return the identical object
/// while it is alive, and nothing is kept once callers let go.
final class WeakStorage<T: AnyObject>: @unchecked Sendable {
    private struct Box { weak var object: T? }
    private var storage: [String: Box] = [:]
    private let lock = NSLock()

    func object(forKey key: String, orInsert make: () -> T) -> T {
        lock.withLock {
            if let existing = storage[key]?.object { return existing }
            let made = make()
            storage[key] = Box(object: made)
            if storage.count > 64 { storage = storage.filter { $0.value.object != nil } }
            return made
        }
    }
}
