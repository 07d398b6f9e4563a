import FoundationEssentials

/// The gateway's answers, as proto3 JSON renders them: every int64 a string, and every zero,
/// false or empty field left out (so everything is optional).
enum EtcdJSON {
    struct Header: Decodable {
        var revision: String?

        /// The cluster's revision when it answered, range-checked (``EtcdRevision/parse(_:)``).
        func number() throws(SyncError) -> Int64 {
            guard let revision else { throw SyncError.malformed("an answer without a revision") }
            guard let value = EtcdRevision.parse(revision) else { throw SyncError.malformed("an answer whose revision is out of range") }
            return value
        }
    }

    struct KeyValue: Decodable {
        var key: String?
        var value: String?
        var mod_revision: String?
        var create_revision: String?
    }

    struct Range: Decodable {
        var header: Header
        var kvs: [KeyValue]?
        var count: String?
    }

    struct Txn: Decodable {
        struct Response: Decodable { var response_range: Range? }
        var header: Header
        var succeeded: Bool?
        var responses: [Response]?
    }

    struct Delete: Decodable {
        var header: Header
        var deleted: String?
    }

    struct Lease: Decodable {
        var ID: String?
    }

    struct Failure: Decodable {
        var error: String?
        var message: String?
        var code: Int?
    }

    struct WatchLine: Decodable {
        struct Result: Decodable {
            struct Event: Decodable {
                var type: String?
                var kv: KeyValue?
            }
            var header: Header
            var created: Bool?
            var canceled: Bool?
            var compact_revision: String?
            var events: [Event]?
        }
        var result: Result?
    }

    static func keyValues(_ list: [KeyValue]?) throws(SyncError) -> [EtcdClient.KeyValue] {
        var result: [EtcdClient.KeyValue] = []
        for entry in list ?? [] {
            guard let key = entry.key.flatMap({ Data(base64Encoded: $0) }) else { throw .malformed("a key that is not base64") }
            guard let value = (entry.value ?? "").isEmpty ? Data() : entry.value.flatMap({ Data(base64Encoded: $0) }) else {
                throw .malformed("a value that is not base64")
            }
            guard let modRevision = EtcdRevision.parse(entry.mod_revision), let createRevision = EtcdRevision.parse(entry.create_revision) else {
                throw .malformed("a key whose revision is out of range")
            }
            result.append(EtcdClient.KeyValue(key: Array(key), value: Array(value), modRevision: modRevision, createRevision: createRevision))
        }
        return result
    }
}
