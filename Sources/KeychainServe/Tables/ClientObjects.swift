/// Objects that belong to bus clients (a client is its unique name, `:1.42`), each under a
/// path of its own, shared fairly: no client holds more than ``perClient`` of them, and all
/// together no more than ``total``.
///
/// A full share never refuses anyone. A client at its own limit gets room by losing its own
/// least recently used object; with the table full, the client that holds the most loses its
/// least recently used one. So a client that opens objects in a loop, or many connections of
/// one program, only ever reclaims what they hold themselves, or what the biggest holder
/// holds: every other client keeps being served. What is reclaimed is handed back to the
/// caller, which says goodbye to it (a prompt's `Completed`).
struct ClientObjects<Value> {
    let perClient: Int
    let total: Int

    private struct Entry {
        let owner: String
        var value: Value
    }
    private var entries: [String: Entry] = [:]
    /// Each client's paths, with when each was last used (a tick of ``clock``).
    private var used: [String: [String: UInt64]] = [:]
    private var clock: UInt64 = 0

    init(perClient: Int, total: Int) {
        precondition(perClient > 0 && total >= perClient)
        self.perClient = perClient
        self.total = total
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// How many objects `owner` holds.
    func count(ownedBy owner: String) -> Int { used[owner]?.count ?? 0 }

    /// The object at `path` and its owner, without counting it as used.
    func peek(_ path: String) -> (owner: String, value: Value)? {
        entries[path].map { ($0.owner, $0.value) }
    }

    /// The object at `path`, counted as used now.
    mutating func use(_ path: String) -> (owner: String, value: Value)? {
        guard let entry = entries[path] else { return nil }
        clock += 1
        used[entry.owner]?[path] = clock
        return (entry.owner, entry.value)
    }

    /// Replaces the value at `path`, keeping its owner; false when there is none.
    @discardableResult
    mutating func update(_ path: String, _ body: (inout Value) -> Void) -> Bool {
        guard entries[path] != nil else { return false }
        body(&entries[path]!.value)
        return true
    }

    /// Adds `value` at `path` (a path not in use) for `owner`, making room first as the type
    /// says; returns what was reclaimed to make it.
    mutating func insert(_ value: Value, at path: String, owner: String) -> [(path: String, owner: String, value: Value)] {
        precondition(entries[path] == nil, "a path in use")
        var reclaimed: [(path: String, owner: String, value: Value)] = []
        if count(ownedBy: owner) >= perClient, let oldest = leastRecentlyUsed(of: owner), let gone = remove(oldest) {
            reclaimed.append((oldest, owner, gone))
        }
        if entries.count >= total, let holder = biggestHolder, let oldest = leastRecentlyUsed(of: holder), let gone = remove(oldest) {
            reclaimed.append((oldest, holder, gone))
        }
        clock += 1
        entries[path] = Entry(owner: owner, value: value)
        used[owner, default: [:]][path] = clock
        return reclaimed
    }

    /// Removes the object at `path`; its value, or nil when there was none.
    @discardableResult
    mutating func remove(_ path: String) -> Value? {
        guard let entry = entries.removeValue(forKey: path) else { return nil }
        used[entry.owner]?[path] = nil
        if used[entry.owner]?.isEmpty == true { used[entry.owner] = nil }
        return entry.value
    }

    /// Removes every object of `owner` (the client left the bus); their paths and values.
    mutating func removeAll(ownedBy owner: String) -> [(path: String, value: Value)] {
        guard let paths = used.removeValue(forKey: owner) else { return [] }
        return paths.keys.sorted().compactMap { path in entries.removeValue(forKey: path).map { (path, $0.value) } }
    }

    /// Every object's path, owner and value, by path.
    var all: [(path: String, owner: String, value: Value)] {
        entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value.owner, $0.value.value) }
    }

    private func leastRecentlyUsed(of owner: String) -> String? {
        used[owner]?.min { $0.value < $1.value }?.key
    }

    /// The client holding the most objects (the first by name among equals, so that the
    /// choice does not depend on a dictionary's order).
    private var biggestHolder: String? {
        used.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key
    }
}
