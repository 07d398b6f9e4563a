import Foundation

/// Collects values from several threads (errors, results) for a test to check afterwards.
public final class Collector<Element>: @unchecked Sendable {
    private var elements: [Element] = []
    private let lock = NSLock()

    public init() {}

    public func add(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    public var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }

    public var count: Int { all.count }
}
