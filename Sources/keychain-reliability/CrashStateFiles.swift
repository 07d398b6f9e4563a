import COpenSSL
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A crash state as files: the tree before the program ran with the calls that reached the
/// disk applied in order, written out under a new root (files 0600, directories 0700, as the
/// vault makes them; names that share a file are hard links again).
struct CrashStateFiles {
    var names: [String: Int]
    var directories: Set<String>
    var contents: [Int: [UInt8]]

    init(_ trace: FileTrace, _ state: CrashState) {
        names = trace.initialNames
        directories = trace.initialDirectories
        contents = trace.initialContents
        for index in 0..<state.point where state.persisted[index] {
            let operation = trace.operations[index]
            switch operation {
            case .write(let inode, let offset, let bytes):
                var data = contents[inode] ?? []
                if data.count < offset + bytes.count { data += [UInt8](repeating: 0, count: offset + bytes.count - data.count) }
                data.replaceSubrange(offset..<offset + bytes.count, with: bytes)
                contents[inode] = data
            case .truncate(let inode, let size):
                var data = contents[inode] ?? []
                if data.count > size { data.removeLast(data.count - size) } else { data += [UInt8](repeating: 0, count: size - data.count) }
                contents[inode] = data
            case .makeDirectory(let path): directories.insert(path)
            case .removeDirectory(let path): directories.remove(path)
            default: CrashStateSpace.applyName(operation, to: &names)
            }
        }
        // Entries of a directory whose own entry did not reach the disk are lost with it.
        directories = directories.filter { Self.reachable($0, directories) }
        names = names.filter { directories.contains(FileTrace.parent($0.key)) }
    }

    private static func reachable(_ directory: String, _ directories: Set<String>) -> Bool {
        var path = directory
        while !path.isEmpty {
            guard directories.contains(path) else { return false }
            path = FileTrace.parent(path)
        }
        return true
    }

    /// A digest of the names and bytes, so that one state reached by different choices is checked once.
    var digest: [UInt8] {
        var buffer: [UInt8] = []
        for directory in directories.sorted() { buffer += Array("d\(directory)\u{0}".utf8) }
        let groups = Dictionary(grouping: names.keys.sorted(), by: { names[$0]! })
        for (name, inode) in names.sorted(by: { $0.key < $1.key }) {
            let data = contents[inode] ?? []
            buffer += Array("f\(name)\u{0}\(groups[inode]!.first!)\u{0}\(data.count)\u{0}".utf8) + data
        }
        return Self.sha256(buffer)
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }
        return digest
    }

    /// Writes the state under `root` (which must not exist).
    func write(to root: String) throws {
        guard mkdir(root, 0o700) == 0 else { throw FileTrace.Failure(description: "cannot create \(root): \(String(cString: strerror(errno)))") }
        for directory in directories.sorted(by: { $0.count < $1.count }) where !directory.isEmpty {
            guard mkdir(root + "/" + directory, 0o700) == 0 else { throw FileTrace.Failure(description: "cannot create \(directory)") }
        }
        var written: [Int: String] = [:]
        for (name, inode) in names.sorted(by: { $0.key < $1.key }) {
            let path = root + "/" + name
            if let first = written[inode] {
                guard link(first, path) == 0 else { throw FileTrace.Failure(description: "cannot link \(name)") }
                continue
            }
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileTrace.Failure(description: "cannot create \(name)") }
            let data = contents[inode] ?? []
            let count = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard count == data.count else { throw FileTrace.Failure(description: "cannot write \(name)") }
            written[inode] = path
            // The machine restarts before anything reads the files: none was changed seconds ago
            // (the vault takes a key file seconds old without its vault for a creation under way).
            var times = [timespec(tv_sec: time(nil) - 3_600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3_600, tv_nsec: 0)]
            utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
        }
    }
}
