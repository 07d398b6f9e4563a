internal import KeychainSystem
import Synchronization

/// One Ed25519 signature over a batch of item records: the signature covers the root of a
/// hash tree whose leaves are the records (each with its etcd key), and each record carries
/// the path from its leaf to the root. A record verifies alone (its path and the batch's
/// signature), so records stay independent in etcd, while a device signs once per batch it
/// pushes and verifies once per batch it receives.
///
/// Leaves and inner nodes are hashed under different prefixes (as in RFC 6962), and the leaf
/// binds the record's key, so a path proves that exactly this record, at exactly this key,
/// was in what the signer signed. Nodes are SHA-256 cut to 128 bits, the security level of
/// Ed25519 itself: a record that was not signed needs a second preimage of one (2^128 work);
/// a member could make two records share a root more cheaply, but a member signs what it
/// likes anyway. Short nodes and small batches keep the path, which every record carries, short.
enum BatchSignature {
    /// One step of a path: the sibling's hash, and whether it is on the left.
    struct Step: Equatable {
        var siblingIsLeft: Bool
        var hash: [UInt8]
    }

    /// Records per signature: a path of at most 6 steps.
    static let batchSize = 64
    /// At most this many steps in a path (the directions fit one byte).
    static let maximumSteps = 8
    static let nodeSize = 16

    static func leaf(key: [UInt8], body: ArraySlice<UInt8>) -> [UInt8] {
        Array(Digest.sha256([0] + [UInt8](bigEndian: UInt32(key.count)) + key + body).prefix(nodeSize))
    }

    static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] { Array(Digest.sha256([1] + left + right).prefix(nodeSize)) }

    /// What the device signs for a batch whose tree has `root`.
    static func message(root: [UInt8]) -> [UInt8] { Array("swift-keychain sync batch v3".utf8) + root }

    /// The root of the tree over `leaves` and each leaf's path to it. A node without a sibling
    /// moves up a level unchanged (no step in the paths beneath it).
    static func tree(_ leaves: [[UInt8]]) -> (root: [UInt8], paths: [[Step]]) {
        precondition(!leaves.isEmpty && leaves.count <= 1 << maximumSteps, "a batch of \(leaves.count) records")
        var paths = [[Step]](repeating: [], count: leaves.count)
        // Which leaves sit under each node of the current level.
        var level = leaves
        var under = leaves.indices.map { [$0] }
        while level.count > 1 {
            var next: [[UInt8]] = []
            var nextUnder: [[Int]] = []
            var index = 0
            while index < level.count {
                guard index + 1 < level.count else {
                    next.append(level[index])
                    nextUnder.append(under[index])
                    break
                }
                for leaf in under[index] { paths[leaf].append(Step(siblingIsLeft: false, hash: level[index + 1])) }
                for leaf in under[index + 1] { paths[leaf].append(Step(siblingIsLeft: true, hash: level[index])) }
                next.append(node(level[index], level[index + 1]))
                nextUnder.append(under[index] + under[index + 1])
                index += 2
            }
            level = next
            under = nextUnder
        }
        return (level[0], paths)
    }

    /// The root a leaf and its path lead to.
    static func root(of leaf: [UInt8], path: [Step]) -> [UInt8] {
        path.reduce(leaf) { hash, step in step.siblingIsLeft ? node(step.hash, hash) : node(hash, step.hash) }
    }

    /// `sibling hashes (16 each) || directions (1: bit i set when sibling i is on the left) ||
    /// count (1)`: read from the end of a record.
    static func encode(_ path: [Step]) -> [UInt8] {
        var directions: UInt8 = 0
        for (index, step) in path.enumerated() where step.siblingIsLeft { directions |= 1 << index }
        return path.flatMap(\.hash) + [directions, UInt8(path.count)]
    }

    /// The path that ends just before `end` in `value`, and where it starts; nil when malformed.
    static func decode(_ value: [UInt8], end: Int) -> (path: [Step], start: Int)? {
        guard end >= 2, end <= value.count else { return nil }
        let count = Int(value[end - 1])
        let directions = value[end - 2]
        let start = end - 2 - count * nodeSize
        guard count <= maximumSteps, start >= 0, directions >> count == 0 else { return nil }
        let path = (0..<count).map { index in
            Step(siblingIsLeft: directions & (1 << index) != 0, hash: Array(value[(start + index * nodeSize)..<(start + (index + 1) * nodeSize)]))
        }
        return (path, start)
    }

    /// Batch signatures already checked, so each batch costs one verification however many
    /// of its records arrive: keyed by signer key, root and signature, so a hit is the very
    /// check that succeeded (or failed) before.
    final class Verified: Sendable {
        private let checked = VisibleMutex<[[UInt8]: Bool]>([:])

        /// Whether `signature` is `publicKey`'s signature of the batch with `root`.
        func isValid(_ signature: [UInt8], root: [UInt8], publicKey: [UInt8]) -> Bool {
            let claim = publicKey + root + signature
            if let known = checked.withLock({ $0[claim] }) { return known }
            let valid = Ed25519.isValid(signature, of: BatchSignature.message(root: root), publicKey: publicKey)
            checked.withLock { known in
                if known.count >= 100_000 { known.removeAll(keepingCapacity: true) }
                known[claim] = valid
            }
            return valid
        }
    }
}
