import Foundation
import KeychainTestSupport

/// What a file system keeps of calls it was not yet made to sync when the power goes.
///
/// In all three, `fsync`/`fdatasync` of a file makes every earlier write to that file durable,
/// `fsync` of a directory every earlier change of that directory's entries, and a call after
/// the cut never happened. They differ in what else may survive:
enum PersistenceModel: String, CaseIterable {
    /// ext4 with `data=ordered` (the default): directory changes reach the disk in the order
    /// they were made (the journal), any prefix of the unsynced ones; a name that reached the
    /// disk brings the data written to its file before it; any subset of the other unsynced
    /// writes survives.
    case ordered
    /// Nothing unsynced survives, and a directory change survives only once its own directory
    /// was synced (POSIX's promise, and nothing more); a cut during an fsync leaves any part
    /// of what it was syncing.
    case strict
    /// As `ordered`, but a name (a link, a rename, a new file) may reach the disk before the
    /// data of the file it names (ext4's delayed allocation, other file systems).
    case loose
}

/// One state a power cut can leave: the first `point` calls of the trace were made, and
/// `persisted` says which of them reached the disk.
struct CrashState {
    let point: Int
    let persisted: [Bool]
}

/// The crash states of a trace under a model: for every point of the trace, every allowed
/// choice of what was not yet synced, each choice listed in full when there are at most
/// `limit` of them at that point and otherwise `limit` of them chosen by the seeded generator
/// (the first and last always among them: nothing unsynced, everything).
struct CrashStateSpace {
    let trace: FileTrace
    let model: PersistenceModel
    let limit: Int
    /// Points where the choices were sampled rather than listed, and how many choices there were.
    private(set) var sampledPoints = 0

    init(trace: FileTrace, model: PersistenceModel, limit: Int) {
        self.trace = trace
        self.model = model
        self.limit = limit
    }

    /// Calls `body` with each state, point by point; the last point is the end of the program.
    mutating func forEach(random: inout SeededRandom, _ body: (CrashState) throws -> Void) rethrows {
        let operations = trace.operations
        for point in 0...operations.count {
            let durable = Self.durable(operations, point: point)
            var fixed = durable
            // SQLite's -shm file is rebuilt by the first connection after a restart, so its
            // bytes are left out (its name still counts).
            for index in 0..<point where isSharedMemoryData(operations[index]) { fixed[index] = false }
            if model == .strict {
                try body(CrashState(point: point, persisted: fixed))
                if point < operations.count { try duringBarrier(point, fixed: fixed, durable: durable, random: &random, body) }
                continue
            }
            let nameChanges = (0..<point).filter { operations[$0].isNameChange }
            let firstOptional = (nameChanges.lastIndex { durable[$0] }).map { $0 + 1 } ?? 0
            for prefix in firstOptional...nameChanges.count {
                var persisted = fixed
                for index in nameChanges[..<prefix] { persisted[index] = true }
                for index in nameChanges[prefix...] { persisted[index] = false }
                var forced = Set<Int>()
                if model == .ordered {
                    for index in nameChanges[..<prefix] {
                        guard let inode = operations[index].namedInode ?? renamedInode(operations, index) else { continue }
                        for earlier in 0..<index where operations[earlier].dataInode == inode && !isSharedMemoryData(operations[earlier]) {
                            forced.insert(earlier)
                        }
                    }
                }
                for index in forced { persisted[index] = true }
                let free = (0..<point).filter { operations[$0].dataInode != nil && !durable[$0] && !forced.contains($0) && !isSharedMemoryData(operations[$0]) }
                try eachSubset(of: free.count, random: &random) { chosen in
                    var state = persisted
                    for (bit, index) in free.enumerated() { state[index] = chosen(bit) }
                    try body(CrashState(point: point, persisted: state))
                }
            }
        }
    }

    /// The strict model's states of a cut while the call at `point`, a barrier, is under way:
    /// the file system was writing back what it syncs, and any part of it reached the disk
    /// (any subset of the file's unsynced writes; any prefix of the directory's unsynced
    /// changes, which its journal keeps in order), and nothing else unsynced.
    private mutating func duringBarrier(
        _ point: Int, fixed: [Bool], durable: [Bool], random: inout SeededRandom, _ body: (CrashState) throws -> Void
    ) rethrows {
        let operations = trace.operations
        switch operations[point] {
        case .syncFile(let inode):
            let pending = (0..<point).filter { operations[$0].dataInode == inode && !durable[$0] && !isSharedMemoryData(operations[$0]) }
            guard !pending.isEmpty else { return }
            try eachSubset(of: pending.count, random: &random) { chosen in
                var state = fixed
                for (bit, index) in pending.enumerated() { state[index] = chosen(bit) }
                try body(CrashState(point: point, persisted: state))
            }
        case .syncDirectory(let path):
            let pending = (0..<point).filter { operations[$0].isNameChange && !durable[$0] && operations[$0].directories.contains(path) }
            for count in pending.indices {
                var state = fixed
                for index in pending[...count] { state[index] = true }
                try body(CrashState(point: point, persisted: state))
            }
        default: return
        }
    }

    private mutating func eachSubset(of count: Int, random: inout SeededRandom, _ body: ((Int) -> Bool) throws -> Void) rethrows {
        if count < 20 && 1 << count <= limit {
            for mask in 0..<(1 << count) { try body { mask & (1 << $0) != 0 } }
            return
        }
        sampledPoints += 1
        try body { _ in false }
        try body { _ in true }
        for _ in 0..<max(0, limit - 2) {
            let bits = (0..<count).map { _ in random.next() & 1 == 1 }
            try body { bits[$0] }
        }
    }

    private func isSharedMemoryData(_ operation: FileOperation) -> Bool {
        guard let inode = operation.dataInode else { return false }
        return trace.firstNames[inode]?.hasSuffix("-shm") == true
    }

    /// The file a rename moves: the one its source named when the rename was made.
    private func renamedInode(_ operations: [FileOperation], _ index: Int) -> Int? {
        guard case .rename(let from, _) = operations[index] else { return nil }
        var names = trace.initialNames
        for operation in operations[..<index] { Self.applyName(operation, to: &names) }
        return names[from]
    }

    /// Which of the first `point` calls a barrier made durable before the cut.
    static func durable(_ operations: [FileOperation], point: Int) -> [Bool] {
        var durable = [Bool](repeating: false, count: point)
        var syncedFiles = Set<Int>()
        var syncedDirectories = Set<String>()
        for index in stride(from: point - 1, through: 0, by: -1) {
            let operation = operations[index]
            switch operation {
            case .syncFile(let inode): syncedFiles.insert(inode)
            case .syncDirectory(let path): syncedDirectories.insert(path)
            default:
                if let inode = operation.dataInode {
                    durable[index] = syncedFiles.contains(inode)
                } else if operation.isNameChange {
                    durable[index] = operation.directories.allSatisfy { syncedDirectories.contains($0) }
                }
            }
        }
        return durable
    }

    static func applyName(_ operation: FileOperation, to names: inout [String: Int]) {
        switch operation {
        case .createFile(let path, let inode), .link(let path, let inode): names[path] = inode
        case .rename(let from, let to): names[to] = names.removeValue(forKey: from)
        case .unlink(let path): names[path] = nil
        default: break
        }
    }
}
