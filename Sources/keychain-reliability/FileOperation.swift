/// One call of a traced program that changes what a directory tree holds, with paths relative
/// to that tree's root. Files are numbered (`inode`) so that data written through one name
/// follows the file when it is linked or renamed.
enum FileOperation: Equatable {
    case createFile(path: String, inode: Int)
    case makeDirectory(path: String)
    case link(path: String, inode: Int)
    case rename(from: String, to: String)
    case unlink(path: String)
    case removeDirectory(path: String)
    case write(inode: Int, offset: Int, bytes: [UInt8])
    case truncate(inode: Int, size: Int)
    case syncFile(inode: Int)
    case syncDirectory(path: String)

    /// The directories whose entries this call changes (none for data and barriers).
    var directories: [String] {
        switch self {
        case .createFile(let path, _), .makeDirectory(let path), .link(let path, _), .unlink(let path), .removeDirectory(let path):
            return [FileTrace.parent(path)]
        case .rename(let from, let to):
            return Array(Set([FileTrace.parent(from), FileTrace.parent(to)]))
        case .write, .truncate, .syncFile, .syncDirectory:
            return []
        }
    }

    var isNameChange: Bool { !directories.isEmpty }

    /// The file a data call changes.
    var dataInode: Int? {
        switch self {
        case .write(let inode, _, _), .truncate(let inode, _): inode
        default: nil
        }
    }

    /// The file a name change gives a name to.
    var namedInode: Int? {
        switch self {
        case .createFile(_, let inode), .link(_, let inode): inode
        default: nil
        }
    }

    var summary: String {
        switch self {
        case .createFile(let path, let inode): "create \(path) (#\(inode))"
        case .makeDirectory(let path): "mkdir \(path)"
        case .link(let path, let inode): "link #\(inode) as \(path)"
        case .rename(let from, let to): "rename \(from) -> \(to)"
        case .unlink(let path): "unlink \(path)"
        case .removeDirectory(let path): "rmdir \(path)"
        case .write(let inode, let offset, let bytes): "write #\(inode) \(bytes.count) bytes at \(offset)"
        case .truncate(let inode, let size): "truncate #\(inode) to \(size)"
        case .syncFile(let inode): "fsync #\(inode)"
        case .syncDirectory(let path): "fsync directory \(path.isEmpty ? "." : path)"
        }
    }
}
