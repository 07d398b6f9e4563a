internal import CSDBus
import KeychainCore

#if canImport(Glibc)
    import Glibc
#endif

/// A message sd-bus handed to a handler (`sd_bus_message`), borrowed for the call: its header
/// fields, and its arguments read whole into ``BusValue``s.
struct BusMessage {
    let pointer: OpaquePointer

    /// The unique bus name of the sender (`:1.42`); empty when the bus gave none.
    var sender: String { csdbus_message_get_sender(pointer).map { String(cString: $0) } ?? "" }
    var path: String { csdbus_message_get_path(pointer).map { String(cString: $0) } ?? "" }
    var interface: String { csdbus_message_get_interface(pointer).map { String(cString: $0) } ?? "" }
    var member: String { csdbus_message_get_member(pointer).map { String(cString: $0) } ?? "" }
    /// The signature of the whole body (`sd_bus_message_get_signature`).
    var signature: String { csdbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }
    var isMethodCall: Bool {
        var type: UInt8 = 0
        return csdbus_message_get_type(pointer, &type) >= 0 && Int(type) == Int(CSDBUS_MESSAGE_METHOD_CALL)
    }

    /// The most values one message may hold, containers and their contents counted: a client
    /// cannot make the daemon build an unbounded tree.
    static let valueLimit = 65_536

    /// Every argument of the body, in order.
    /// - Throws: `InvalidArgs` for a body sd-bus cannot parse, a file descriptor, or more than
    ///   ``valueLimit`` values.
    func arguments() throws(ServiceError) -> [BusValue] {
        var budget = Self.valueLimit
        return try readSequence(budget: &budget)
    }

    /// Values until the end of the current container (or of the body).
    private func readSequence(budget: inout Int) throws(ServiceError) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try readValue(budget: &budget) { values.append(value) }
        return values
    }

    private func check(_ result: Int32) throws(ServiceError) {
        if result < 0 { throw .init(.invalidArgs, "the message's arguments could not be read (\(String(cString: strerror(-result))))") }
    }

    private func readValue(budget: inout Int) throws(ServiceError) -> BusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let peeked = csdbus_message_peek_type(pointer, &type, &contentsPointer)
        try check(peeked)
        if peeked == 0 { return nil }
        budget -= 1
        guard budget >= 0 else { throw .init(.limitsExceeded, "the message holds more than \(Self.valueLimit) values") }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var text: UnsafePointer<CChar>?
            try check(csdbus_message_read_basic(pointer, type, &text))
            let string = text.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "s"): return .string(string)
            case UInt8(ascii: "o"): return .objectPath(string)
            default: return .signature(string)
            }
        case UInt8(ascii: "y"):
            var byte: UInt8 = 0
            try check(csdbus_message_read_basic(pointer, type, &byte))
            return .byte(byte)
        case UInt8(ascii: "b"):
            // sd-bus reads a boolean into an int.
            var flag: Int32 = 0
            try check(csdbus_message_read_basic(pointer, type, &flag))
            return .boolean(flag != 0)
        case UInt8(ascii: "n"): return .int16(try basic(type, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(type, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(type, Double(0)))
        case UInt8(ascii: "a") where contents == "y":
            var bytes: UnsafeRawPointer?
            var count = 0
            try check(csdbus_message_read_array(pointer, CChar(bitPattern: UInt8(ascii: "y")), &bytes, &count))
            return .bytes(SecretBytes(count: count) { out in if count > 0, let bytes { out.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: count)) } })
        case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "r"), UInt8(ascii: "v"):
            try check(csdbus_message_enter_container(pointer, type, contents))
            let inner = try readSequence(budget: &budget)
            try check(csdbus_message_exit_container(pointer))
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "a"): return .array(element: contents, inner)
            case UInt8(ascii: "e"):
                guard inner.count == 2 else { throw .init(.invalidArgs, "a dictionary entry without a key and a value") }
                return .entry(inner[0], inner[1])
            case UInt8(ascii: "r"): return .structure(inner)
            default:
                guard inner.count == 1 else { throw .init(.invalidArgs, "a variant without exactly one value") }
                return .variant(inner[0])
            }
        default:
            // File descriptors ('h') and anything newer: no method of the specification takes them.
            throw .init(.invalidArgs, "a value of type '\(Character(UnicodeScalar(UInt8(bitPattern: type))))' is not accepted here")
        }
    }

    private func basic<T: BitwiseCopyable>(_ type: CChar, _ initial: T) throws(ServiceError) -> T {
        var value = initial
        try check(csdbus_message_read_basic(pointer, type, &value))
        return value
    }
}

/// A message this daemon builds (`sd_bus_message`, owned: unreferenced when dropped): a reply,
/// an error reply or a signal.
final class OutgoingMessage {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { csdbus_message_unref(pointer) }

    /// The method return for `call`.
    static func reply(to call: BusMessage) throws(ServiceError) -> OutgoingMessage {
        var out: OpaquePointer?
        try check(csdbus_message_new_method_return(call.pointer, &out), "sd_bus_message_new_method_return")
        return OutgoingMessage(out!)
    }

    /// The error reply for `call`.
    static func error(_ error: ServiceError, to call: BusMessage) throws(ServiceError) -> OutgoingMessage {
        var out: OpaquePointer?
        try check(csdbus_message_new_method_error(call.pointer, &out, error.name.rawValue, error.message), "sd_bus_message_new_method_error")
        return OutgoingMessage(out!)
    }

    /// A signal from the object at `path`.
    static func signal(on bus: OpaquePointer, path: String, interface: String, member: String) throws(ServiceError) -> OutgoingMessage {
        var out: OpaquePointer?
        try check(csdbus_message_new_signal(bus, &out, path, interface, member), "sd_bus_message_new_signal")
        return OutgoingMessage(out!)
    }

    /// Marks the message as carrying a secret: sd-bus wipes its buffers when it frees it.
    func markSensitive() { _ = csdbus_message_sensitive(pointer) }

    static func check(_ result: Int32, _ operation: String) throws(ServiceError) {
        if result < 0 { throw .init(.failed, "\(operation): \(String(cString: strerror(-result)))") }
    }

    /// Appends `values` in order.
    func append(_ values: [BusValue]) throws(ServiceError) {
        for value in values { try append(value) }
    }

    func append(_ value: BusValue) throws(ServiceError) {
        let m = pointer
        func basic<T: BitwiseCopyable>(_ type: UInt8, _ value: T) throws(ServiceError) {
            var copy = value
            try Self.check(csdbus_message_append_basic(m, CChar(bitPattern: type), &copy), "sd_bus_message_append_basic")
        }
        func text(_ type: UInt8, _ value: String) throws(ServiceError) {
            let result = value.withCString { csdbus_message_append_basic(m, CChar(bitPattern: type), $0) }
            try Self.check(result, "sd_bus_message_append_basic")
        }
        func container(_ type: UInt8, _ contents: String, _ body: () throws(ServiceError) -> Void) throws(ServiceError) {
            try Self.check(csdbus_message_open_container(m, CChar(bitPattern: type), contents), "sd_bus_message_open_container")
            try body()
            try Self.check(csdbus_message_close_container(m), "sd_bus_message_close_container")
        }
        switch value {
        case .byte(let v): try basic(UInt8(ascii: "y"), v)
        case .boolean(let v): try basic(UInt8(ascii: "b"), Int32(v ? 1 : 0))
        case .int16(let v): try basic(UInt8(ascii: "n"), v)
        case .uint16(let v): try basic(UInt8(ascii: "q"), v)
        case .int32(let v): try basic(UInt8(ascii: "i"), v)
        case .uint32(let v): try basic(UInt8(ascii: "u"), v)
        case .int64(let v): try basic(UInt8(ascii: "x"), v)
        case .uint64(let v): try basic(UInt8(ascii: "t"), v)
        case .double(let v): try basic(UInt8(ascii: "d"), v)
        case .string(let v): try text(UInt8(ascii: "s"), v)
        case .objectPath(let v): try text(UInt8(ascii: "o"), v)
        case .signature(let v): try text(UInt8(ascii: "g"), v)
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { raw in
                // sd-bus copies the bytes; an empty array still needs a non-null pointer.
                var empty: UInt8 = 0
                return raw.count == 0
                    ? csdbus_message_append_array(m, CChar(bitPattern: UInt8(ascii: "y")), &empty, 0)
                    : csdbus_message_append_array(m, CChar(bitPattern: UInt8(ascii: "y")), raw.baseAddress, raw.count)
            }
            try Self.check(result, "sd_bus_message_append_array")
        case .array(let element, let elements):
            try container(UInt8(ascii: "a"), element) { () throws(ServiceError) in try append(elements) }
        case .entry(let key, let entryValue):
            try container(UInt8(ascii: "e"), key.signature + entryValue.signature) { () throws(ServiceError) in
                try append(key)
                try append(entryValue)
            }
        case .structure(let fields):
            try container(UInt8(ascii: "r"), fields.map(\.signature).joined()) { () throws(ServiceError) in try append(fields) }
        case .variant(let inner):
            try container(UInt8(ascii: "v"), inner.signature) { () throws(ServiceError) in try append(inner) }
        }
    }
}
