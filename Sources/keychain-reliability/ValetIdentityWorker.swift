import Foundation
import Valet

/// A child with nothing but the default store: a Valet made before the store is opened and an
/// equal one made after must be one object, equal and hashed alike.
enum ValetIdentityWorker {
    static func run() -> Int32 {
        let before = Valet.valet(with: Identifier(nonEmpty: "Identity")!, accessibility: .whenUnlocked)
        _ = try? before.containsObject(forKey: "k")  // opens the default store
        let after = Valet.valet(with: Identifier(nonEmpty: "Identity")!, accessibility: .whenUnlocked)
        let words = [before === after ? "identical" : "distinct", before.isEqual(after) ? "equal" : "unequal",
                     before.hash == after.hash ? "hashed" : "unhashed", "set=\(Set([before, after]).count)"]
        print(words.joined(separator: " "))
        return 0
    }
}
