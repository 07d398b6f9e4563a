internal import CCurl
import FoundationEssentials
import Synchronization

/// A client of etcd's v3 JSON gateway (`/v3/kv/...`, `/v3/watch`) over libcurl, trying the
/// cluster's endpoints in turn. etcd is untrusted storage here: this type moves bytes; what
/// they mean, and whether to believe them, is decided above it.
///
/// Every call is blocking and may be made from any thread. A call that reached no endpoint
/// throws ``SyncError/unreachable(_:)``; a write that timed out may still be committed by etcd
/// later, which is why every write above this type is a compare-and-swap.
final class EtcdClient: Sendable {
    /// Where the cluster answers, and how to authenticate to it.
    struct Configuration: Sendable, Equatable {
        /// Base URLs (`http://127.0.0.1:2379`, `https://host:2379`).
        var endpoints: [String]
        /// PEM file of the CA that signed the cluster's certificates, for a private CA.
        var caFile: String?
        /// Client certificate and key (PEM), for a cluster that asks for them.
        var certFile: String?
        var keyFile: String?
    }

    /// One key as stored: bytes and the revisions etcd gave it.
    struct KeyValue: Sendable, Equatable {
        var key: [UInt8]
        var value: [UInt8]
        var modRevision: Int64
        var createRevision: Int64
    }

    let configuration: Configuration
    /// The endpoint that answered last.
    private let preferred = Mutex(0)
    let requestTimeoutMilliseconds: Int

    init(_ configuration: Configuration, requestTimeoutMilliseconds: Int = 4_000) throws(SyncError) {
        guard !configuration.endpoints.isEmpty else { throw .invalidArgument("no etcd endpoint given") }
        for endpoint in configuration.endpoints where !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw .invalidArgument("'\(endpoint)' is not an etcd endpoint URL (http://host:port or https://host:port)")
        }
        self.configuration = configuration
        self.requestTimeoutMilliseconds = requestTimeoutMilliseconds
    }

    // MARK: - Key-value

    /// The keys in `[key, rangeEnd)` (just `key` when `rangeEnd` is nil) changed at or after
    /// `minModRevision`, with the cluster's revision when it answered.
    func range(_ key: [UInt8], rangeEnd: [UInt8]? = nil, minModRevision: Int64 = 0) throws(SyncError) -> (revision: Int64, kvs: [KeyValue]) {
        var fields = ["\"key\":\"\(Self.base64(key))\""]
        if let rangeEnd { fields.append("\"range_end\":\"\(Self.base64(rangeEnd))\"") }
        if minModRevision > 0 { fields.append("\"min_mod_revision\":\"\(minModRevision)\"") }
        let answer = try call("/v3/kv/range", "{" + fields.joined(separator: ",") + "}", as: EtcdJSON.Range.self)
        return (try answer.header.number(), try EtcdJSON.keyValues(answer.kvs))
    }

    /// How many keys `[key, rangeEnd)` holds, and (with `keysOnly`) which.
    func keys(_ key: [UInt8], rangeEnd: [UInt8], keysOnly: Bool) throws(SyncError) -> (count: Int, keys: [[UInt8]]) {
        let fields = "\"key\":\"\(Self.base64(key))\",\"range_end\":\"\(Self.base64(rangeEnd))\",\(keysOnly ? "\"keys_only\":true" : "\"count_only\":true")"
        let answer = try call("/v3/kv/range", "{" + fields + "}", as: EtcdJSON.Range.self)
        guard let count = EtcdRevision.parse(answer.count) else { throw .malformed("a count out of range") }
        return (Int(count), try EtcdJSON.keyValues(answer.kvs).map(\.key))
    }

    /// A condition a write adds to its own: that `key`'s revision is still `modRevision` (0: that
    /// the key does not exist). Sync writes carry the group's epoch in them this way, so that
    /// a write sealed under an epoch goes in only while that epoch is still the group's.
    struct Guard: Sendable {
        var key: [UInt8]
        var modRevision: Int64
    }

    /// Puts `value` at `key` only if the key's revision is still `modRevision` (0: only if the
    /// key does not exist) and every guard holds. Returns whether it did, and otherwise what
    /// the key holds now.
    func put(_ key: [UInt8], _ value: [UInt8], ifModRevision modRevision: Int64, lease: Int64 = 0, guards: [Guard] = []) throws(SyncError) -> (
        succeeded: Bool, current: KeyValue?, revision: Int64
    ) {
        let encodedKey = Self.base64(key)
        let compare = ([Self.compare(encodedKey, modRevision: modRevision)] + guards.map(Self.compare)).joined(separator: ",")
        let body = """
            {"compare":[\(compare)],"success":[{"request_put":{"key":"\(encodedKey)","value":"\(Self.base64(value))"\(lease == 0 ? "" : ",\"lease\":\"\(lease)\"")}}],\
            "failure":[{"request_range":{"key":"\(encodedKey)"}}]}
            """
        let answer = try call("/v3/kv/txn", body, as: EtcdJSON.Txn.self)
        let succeeded = answer.succeeded ?? false
        let current = succeeded ? nil : try EtcdJSON.keyValues(answer.responses?.first?.response_range?.kvs).first
        return (succeeded, current, try answer.header.number())
    }

    /// Puts every value in one transaction, only if each key's revision is still the one given
    /// (0: the key does not exist) and every guard holds; all or none. etcd takes at most 128
    /// operations in each of a transaction's lists.
    func putAll(_ writes: [(key: [UInt8], value: [UInt8], ifModRevision: Int64)], guards: [Guard] = []) throws(SyncError) -> (
        succeeded: Bool, revision: Int64
    ) {
        var compares = guards.map(Self.compare)
        var puts: [String] = []
        for write in writes {
            let key = Self.base64(write.key)
            compares.append(Self.compare(key, modRevision: write.ifModRevision))
            puts.append("{\"request_put\":{\"key\":\"\(key)\",\"value\":\"\(Self.base64(write.value))\"}}")
        }
        let body = "{\"compare\":[\(compares.joined(separator: ","))],\"success\":[\(puts.joined(separator: ","))]}"
        let answer = try call("/v3/kv/txn", body, as: EtcdJSON.Txn.self)
        return (answer.succeeded ?? false, try answer.header.number())
    }

    private static func compare(_ guarded: Guard) -> String { compare(base64(guarded.key), modRevision: guarded.modRevision) }

    private static func compare(_ encodedKey: String, modRevision: Int64) -> String {
        modRevision == 0
            ? "{\"key\":\"\(encodedKey)\",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"0\"}"
            : "{\"key\":\"\(encodedKey)\",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\"\(modRevision)\"}"
    }

    /// A lease of `seconds`: keys put under it go when it expires.
    func grantLease(seconds: Int) throws(SyncError) -> Int64 {
        guard let id = Int64(try call("/v3/lease/grant", "{\"TTL\":\"\(seconds)\"}", as: EtcdJSON.Lease.self).ID ?? "") else {
            throw .malformed("a lease without an id")
        }
        return id
    }

    /// Puts `value` at `key` unconditionally.
    @discardableResult
    func put(_ key: [UInt8], _ value: [UInt8]) throws(SyncError) -> Int64 {
        let body = "{\"key\":\"\(Self.base64(key))\",\"value\":\"\(Self.base64(value))\"}"
        return try call("/v3/kv/put", body, as: EtcdJSON.Range.self).header.number()
    }

    /// Deletes `key` (or `[key, rangeEnd)`); returns how many keys went.
    @discardableResult
    func delete(_ key: [UInt8], rangeEnd: [UInt8]? = nil) throws(SyncError) -> Int {
        var fields = ["\"key\":\"\(Self.base64(key))\""]
        if let rangeEnd { fields.append("\"range_end\":\"\(Self.base64(rangeEnd))\"") }
        let answer = try call("/v3/kv/deleterange", "{" + fields.joined(separator: ",") + "}", as: EtcdJSON.Delete.self)
        return Int(clamping: EtcdRevision.parse(answer.deleted) ?? 0)
    }

    /// Deletes `key` only if its revision is still `modRevision`; returns whether it did.
    @discardableResult
    func delete(_ key: [UInt8], ifModRevision modRevision: Int64) throws(SyncError) -> Bool {
        let encodedKey = Self.base64(key)
        let body = "{\"compare\":[\(Self.compare(encodedKey, modRevision: modRevision))],\"success\":[{\"request_delete_range\":{\"key\":\"\(encodedKey)\"}}]}"
        return try call("/v3/kv/txn", body, as: EtcdJSON.Txn.self).succeeded ?? false
    }

    /// The end of the range of keys that start with `prefix`.
    static func rangeEnd(ofPrefix prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }

    // MARK: - Watch

    /// What a watch stream said.
    enum WatchEvent {
        /// Keys were put (deletes are left out: nothing here deletes a key it keeps); the
        /// revision of the last change.
        case changed(revision: Int64, puts: [KeyValue])
        /// The history before `revision` was compacted away: read the current state instead.
        case compacted(revision: Int64)
        /// Every change up to `revision`, which is at least the cluster's revision when the
        /// watch began, has been reported: etcd's progress notification, which it sends (to a
        /// watch that asks for them, at the cluster's own interval) only once the watch has
        /// caught up with the present.
        case caughtUp(revision: Int64)
    }

    /// Watches the keys under `prefix` from `startRevision`, calling `onEvent` for each batch
    /// of changes until it returns false, the stream has been idle for `idleSeconds`, or the
    /// endpoint goes away (then it returns, and the caller reads and watches again). With
    /// `progress`, etcd's progress notifications are asked for and reported too.
    func watch(prefix: [UInt8], startRevision: Int64, idleSeconds: Int, progress: Bool = false, onEvent: @escaping (WatchEvent) -> Bool) throws(SyncError) {
        let body = """
            {"create_request":{"key":"\(Self.base64(prefix))","range_end":"\(Self.base64(Self.rangeEnd(ofPrefix: prefix)))",\
            "start_revision":"\(startRevision)"\(progress ? ",\"progress_notify\":true" : "")}}
            """
        // The cluster's revision when the watch began (its creation's answer); nil before.
        var began: Int64?
        let lines = LineSplitter { line in
            guard let result = (try? JSONDecoder().decode(EtcdJSON.WatchLine.self, from: Data(line)))?.result else { return true }
            if let compacted = EtcdRevision.parse(result.compact_revision), compacted > 0 {
                _ = onEvent(.compacted(revision: compacted))
                return false
            }
            if result.canceled == true { return false }
            if result.created == true {
                began = try? result.header.number()
                return true
            }
            guard let events = result.events, !events.isEmpty else {
                // No events and no creation: a progress notification (this stream sends no
                // progress request, whose answer could come before the history it covers).
                guard progress, let began, let revision = try? result.header.number(), revision >= began else { return true }
                return onEvent(.caughtUp(revision: revision))
            }
            // A batch whose numbers are out of range ends the watch: the next full round reads
            // (and checks) the same changes again.
            guard let puts = try? EtcdJSON.keyValues(events.filter { $0.type == nil || $0.type == "PUT" }.compactMap(\.kv)),
                let revision = try? result.header.number()
            else { return false }
            return onEvent(.changed(revision: revision, puts: puts))
        }
        _ = try perform("/v3/watch", body, timeoutMilliseconds: 0, idleSeconds: idleSeconds, stream: lines)
    }

    /// Every value `key` was put with since `startRevision`, up to its put at `modRevision`
    /// (read from etcd's history, as a watch replays it); nil when that history was compacted
    /// away (then it cannot be told).
    /// Reading to the present (`modRevision` beyond any put) ends at etcd's first progress
    /// notification, which comes only once the watch has reported every change up to the
    /// revision the cluster had when it began; a cluster that sends none at a short interval
    /// (etcd's default is minutes) ends it after `idleSeconds` of a quiet watch instead. A key
    /// that keeps changing for longer than `historyDeadline` cannot be told either (nil),
    /// rather than holding the round for as long as someone writes. Without `progress`, only
    /// the quiet watch ends it.
    func history(of key: [UInt8], from startRevision: Int64, through modRevision: Int64, idleSeconds: Int = 2, progress: Bool = true) throws(SyncError)
        -> [KeyValue]?
    {
        let seen = HistoryCollector()
        let deadline = ContinuousClock.now + Self.historyDeadline
        try watch(prefix: key, startRevision: max(1, startRevision), idleSeconds: idleSeconds, progress: progress) { event in
            switch event {
            case .caughtUp:
                return false
            case .changed(_, let puts):
                let mine = puts.filter { $0.key == key }
                seen.puts += mine
                if ContinuousClock.now > deadline {
                    seen.undecidable = true
                    return false
                }
                return !mine.contains { $0.modRevision >= modRevision }
            case .compacted:
                seen.undecidable = true
                return false
            }
        }
        return seen.undecidable ? nil : seen.puts
    }

    /// The longest a history read waits on a key that keeps changing.
    static let historyDeadline = Duration.seconds(10)

    private final class HistoryCollector {
        var puts: [KeyValue] = []
        /// The history cannot tell: compacted away, or still moving at the deadline.
        var undecidable = false
    }

    // MARK: - Transport

    private func call<Answer: Decodable>(_ path: String, _ body: String, as: Answer.Type) throws(SyncError) -> Answer {
        let collected = BodyCollector()
        let status = try perform(path, body, timeoutMilliseconds: requestTimeoutMilliseconds, idleSeconds: 0, stream: collected)
        let data = Data(collected.bytes)
        if status != 200 || (try? JSONDecoder().decode(EtcdJSON.Failure.self, from: data))?.error != nil {
            let failure = try? JSONDecoder().decode(EtcdJSON.Failure.self, from: data)
            throw .server(code: failure?.code ?? status, message: failure?.error ?? failure?.message ?? "HTTP \(status)")
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw .malformed("a \(path) answer that is not etcd's")
        }
    }

    /// Sends `body` to each endpoint in turn, starting with the one that answered last, until
    /// one completes the transfer. An error answer from etcd that another member may not give
    /// (no leader, timed out, unavailable) moves on to the next endpoint too.
    private func perform(_ path: String, _ text: String, timeoutMilliseconds: Int, idleSeconds: Int, stream: some BodySink) throws(SyncError) -> Int {
        let endpoints = configuration.endpoints
        let first = preferred.withLock { $0 }
        var failure = ""
        for attempt in 0..<endpoints.count {
            let index = (first + attempt) % endpoints.count
            let endpoint = endpoints[index]
            stream.reset()
            var status = 0
            var message = ""
            let code = Self.post(
                url: endpoint + path, body: text, configuration: configuration, timeoutMilliseconds: timeoutMilliseconds, idleSeconds: idleSeconds,
                sink: stream, status: &status, message: &message)
            if code == CCURL_UNAVAILABLE { throw .unreachable(message) }
            // A stream we ended ourselves, or that went idle, ended normally.
            let streamEnded = timeoutMilliseconds == 0 && (code == CCURL_ABORTED || code == CCURL_TIMEDOUT || code == 18)
            if code == 0 && !(500...599).contains(status) || streamEnded && status == 200 {
                if index != first { preferred.withLock { $0 = index } }
                return status
            }
            failure = code == 0 ? "\(endpoint) answered HTTP \(status)" : "\(endpoint): \(message)"
        }
        throw .unreachable(failure)
    }

    private static func post(
        url: String, body: String, configuration: Configuration, timeoutMilliseconds: Int, idleSeconds: Int, sink: some BodySink,
        status: inout Int, message: inout String
    ) -> Int32 {
        var httpStatus = 0
        var errorBuffer = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(sink as AnyObject).toOpaque()
        let code = url.withCString { url in
            body.withCString { body in
                withOptionalCString(configuration.caFile) { ca in
                    withOptionalCString(configuration.certFile) { cert in
                        withOptionalCString(configuration.keyFile) { key in
                            var request = ccurl_request(
                                url: url, body: body, ca_file: ca, cert_file: cert, key_file: key,
                                connect_timeout_ms: 1_500, timeout_ms: timeoutMilliseconds, idle_timeout_s: idleSeconds)
                            return ccurl_post(
                                &request,
                                { bytes, length, context in
                                    let sink = Unmanaged<AnyObject>.fromOpaque(context!).takeUnretainedValue() as! any BodySink
                                    return sink.receive(UnsafeRawBufferPointer(start: bytes, count: length)) ? length : 0
                                }, context, &httpStatus, &errorBuffer)
                        }
                    }
                }
            }
        }
        status = httpStatus
        message = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return code
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// Where a transfer's body goes as it arrives.
private protocol BodySink: AnyObject {
    /// Takes a chunk; false stops the transfer.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Forgets what an earlier attempt received.
    func reset()
}

private final class BodyCollector: BodySink {
    var bytes: [UInt8] = []
    /// etcd answers are small; a larger one is not etcd's.
    static let limit = 64 << 20
    func receive(_ chunk: UnsafeRawBufferPointer) -> Bool {
        bytes.append(contentsOf: chunk)
        return bytes.count <= Self.limit
    }
    func reset() { bytes.removeAll() }
}

/// Splits a newline-delimited JSON stream (etcd's watch) into lines.
private final class LineSplitter: BodySink {
    private var pending: [UInt8] = []
    private let onLine: ([UInt8]) -> Bool
    init(_ onLine: @escaping ([UInt8]) -> Bool) { self.onLine = onLine }
    func receive(_ chunk: UnsafeRawBufferPointer) -> Bool {
        pending.append(contentsOf: chunk)
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = Array(pending[..<newline])
            pending.removeSubrange(...newline)
            if !line.isEmpty, !onLine(line) { return false }
        }
        return pending.count <= 16 << 20
    }
    func reset() { pending.removeAll() }
}
