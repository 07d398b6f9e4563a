import Foundation

/// Whether `condition` holds within `seconds`, asked every 100 ms.
public func eventually(seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if try condition() { return true }
        usleep(100_000)
    } while Date() < deadline
    return false
}
