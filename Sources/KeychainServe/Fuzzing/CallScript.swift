import KeychainCore

/// A sequence of method calls read from fuzzer bytes: each byte chooses, so that every input is
/// some sequence and a small change of input a small change of calls. The calls are the ones a
/// client can send: values always of the signature they say they are (sd-bus checks that
/// before the daemon sees them), aimed mostly at the specification's paths, methods and
/// property names, with the paths the daemon answered with earlier in the same sequence.
struct CallScript {
    private var bytes: ArraySlice<UInt8>
    /// Object paths seen in replies so far (items, sessions, prompts, collections), to aim at.
    private(set) var knownPaths: [String] = [
        ObjectPath.root, ObjectPath.collectionPath("login"), ObjectPath.collectionPath("session"), "\(ObjectPath.root)/aliases/default",
        "\(ObjectPath.root)/aliases/session", ObjectPath.none,
    ]

    /// The clients of the sequence, by unique name.
    static let senders = [":1.7", ":1.8", ":1.9"]

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    var isExhausted: Bool { bytes.isEmpty }

    /// What the next step of the sequence does.
    enum Step {
        case call(IncomingCall)
        /// The client leaves the bus (its sessions close).
        case clientLeft(String)
    }

    mutating func nextStep() -> Step {
        if byte() == 0xFF { return .clientLeft(pick(Self.senders)) }
        var (interface, member, expected) = self.method()
        let sender = self.sender()
        if ["CreateItem", "GetSecret", "SetSecret", "GetSecrets"].contains(member), sessions[sender] == nil, byte() < 192 {
            // A client opens a session before it moves a secret.
            (interface, member, expected) = (ServiceInterface.name, "OpenSession", "sv")
            let call = IncomingCall(
                path: ObjectPath.root, interface: interface, member: member, signature: expected, sender: sender,
                arguments: { () throws(ServiceError) in [.string("plain"), .variant(.string(""))] })
            return .call(call)
        }
        // Mostly the method's own signature, so that calls pass the check and reach the handlers.
        let signature = byte() < 224 ? expected : pick(["", "s", "o", "ao", "a{ss}", "sv", "(oayays)", "v", "ay"])
        var arguments = IntrospectableInterface.completeTypes(signature).map { value(of: Substring($0), depth: 0) }
        if member == "OpenSession", case .string = arguments.first, byte() < 192 {
            arguments[0] = .string(pick(["plain", TransferSession.diffieHellmanName]))
        }
        if signature == expected, byte() < 128, let usual = usualArguments(member, interface: interface) { arguments = usual }
        // A property call goes mostly to an object of the interface it names.
        let named = interface == SecretServiceDaemon.propertiesInterface ? arguments.first?.string.flatMap { $0.isEmpty ? nil : $0 } : nil
        let path = self.path(for: named ?? interface)
        let call = IncomingCall(
            path: path, interface: interface, member: member, signature: arguments.map(\.signature).joined(), sender: sender,
            arguments: { () throws(ServiceError) in arguments })
        return .call(call)
    }

    /// The session each client opened last.
    private var sessions: [String: String] = [:]

    /// Remembers the object paths of a reply, so that later calls can name them.
    mutating func learn(_ values: [BusValue], answering call: IncomingCall) {
        if call.member == "OpenSession", values.count == 2, let path = values[1].objectPath { sessions[call.sender] = path }
        for value in values { collectPaths(value) }
        if knownPaths.count > 64 { knownPaths.removeFirst(knownPaths.count - 64) }
    }

    private mutating func collectPaths(_ value: BusValue) {
        switch value {
        case .objectPath(let path) where !knownPaths.contains(path): knownPaths.append(path)
        case .array(_, let values), .structure(let values): for each in values { collectPaths(each) }
        case .entry(let key, let value):
            collectPaths(key)
            collectPaths(value)
        case .variant(let inner): collectPaths(inner)
        default: break
        }
    }

    /// Arguments as a well-behaved client gives them (its own session, attributes of strings,
    /// the property names of the specification), so that sequences reach what lies past the
    /// checks: stored items, their index, their secrets.
    private mutating func usualArguments(_ member: String, interface: String) -> [BusValue]? {
        let session = sessions[lastSender] ?? objectPath()
        switch (interface, member) {
        case (CollectionInterface.name, "CreateItem"):
            let properties = BusValue.properties([
                (CollectionInterface.labelProperty, .string(text())), (CollectionInterface.attributesProperty, .stringMap(attributes())),
            ])
            return [properties, secret(session), .boolean(byte() & 1 == 1)]
        case (_, "SearchItems"): return [.stringMap(attributes())]
        case (ItemInterface.name, "GetSecret"): return [.objectPath(session)]
        case (ItemInterface.name, "SetSecret"): return [secret(session)]
        case (ServiceInterface.name, "GetSecrets"): return [.paths([objectPath(), objectPath()]), .objectPath(session)]
        case (SecretServiceDaemon.propertiesInterface, "Set"):
            let attributes = byte() & 1 == 0
            return [
                .string(ItemInterface.name), .string(attributes ? "Attributes" : "Label"), .variant(attributes ? .stringMap(self.attributes()) : .string(text())),
            ]
        default: return nil
        }
    }

    /// Up to three attribute pairs from the words the handlers know.
    private mutating func attributes() -> [String: String] {
        var map: [String: String] = [:]
        for _ in 0..<Int(byte() % 4) { map[pick(["service", "user", "xdg:schema", "x", text()])] = text() }
        return map
    }

    /// A secret structure (`(oayays)`) in `session`: no parameters and the value in clear, as a
    /// plain session takes it.
    private mutating func secret(_ session: String) -> BusValue {
        .structure([.objectPath(session), .bytes(SecretBytes(count: 0) { _ in }), .bytes(blob()), .string(pick(["text/plain", "", text()]))])
    }

    // MARK: - Choices

    private mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    private var lastSender = senders[0]

    /// Mostly the client of the call before (a client's calls follow each other), sometimes another.
    private mutating func sender() -> String {
        if byte() >= 192 { lastSender = pick(Self.senders) }
        return lastSender
    }

    /// An object path argument: mostly the newest one the daemon named (the session just
    /// opened, the item just created), else any it named, else one it never made.
    private mutating func objectPath() -> String {
        let choice = byte()
        if choice < 96, let newest = knownPaths.last { return newest }
        if choice < 208 { return pick(knownPaths) }
        return ObjectPath.root + "/" + pick(["collection", "session", "prompt", "aliases"]) + "/" + text()
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[Int(byte()) % choices.count] }

    /// Mostly a path of an object that has `interface` (one the daemon named, when there is
    /// one), sometimes any path at all.
    private mutating func path(for interface: String) -> String {
        let fitting = knownPaths.filter { path in
            switch (ObjectPath(path), interface) {
            case (.service, ServiceInterface.name), (.collection, CollectionInterface.name), (.item, ItemInterface.name),
                (.session, SessionInterface.name), (.prompt, PromptInterface.name):
                return true
            case (.some, SecretServiceDaemon.propertiesInterface), (.some, IntrospectableInterface.name), (.some, ""): return true
            default: return false
            }
        }
        if !fitting.isEmpty, byte() < 192 { return pick(fitting) }
        switch byte() % 8 {
        case 0: return pick(["", "/", "/org", "\(ObjectPath.root)/", "\(ObjectPath.root)//x", "\(ObjectPath.root)/collection/login/ZZ", "\(ObjectPath.root)/prompt/1"])
        case 1: return "\(ObjectPath.root)/\(pick(["collection", "aliases", "session", "prompt"]))/\(text())"
        case 2: return ObjectPath.itemPath(pick(["login", "session", "nothere"]), pick(["0", "00000000000000aa", "ffffffffffffffff", text()]))
        default: return pick(knownPaths)
        }
    }

    private static let members: [(String, String, String)] = {
        var all: [(String, String, String)] = []
        // The specification's interfaces, then Properties, each by name (as before the table, so that a
        // corpus keeps choosing the same calls).
        let table = SecretServiceDaemon.methodTable
        for method in table.filter({ $0.interface != PropertiesInterface.name }).sorted(by: { ($0.interface, $0.name) < ($1.interface, $1.name) }) {
            all.append((method.interface, method.name, method.arguments))
        }
        for method in table.filter({ $0.interface == PropertiesInterface.name }).sorted(by: { $0.name < $1.name }) {
            all.append((method.interface, method.name, method.arguments))
        }
        return all + [(IntrospectableInterface.name, "Introspect", ""), ("", "Introspect", ""), ("", "GetSecret", "o"), ("org.example.None", "Nothing", "")]
    }()

    private mutating func method() -> (String, String, String) { pick(Self.members) }

    /// Words the handlers look for, and a few they do not.
    private static let words = [
        "", "plain", TransferSession.diffieHellmanName, "default", "session", "login", "x", CollectionInterface.labelProperty,
        CollectionInterface.attributesProperty, "org.freedesktop.Secret.Collection.Label", "org.freedesktop.Secret.Item.Type", "Label", "Attributes",
        "Locked", "Items", "Collections", "Created", "Modified", ServiceInterface.name, CollectionInterface.name, ItemInterface.name,
        "text/plain", "xdg:schema", "service", "user", "no such thing", "a_b_9", "Ü", String(repeating: "a", count: 300),
    ]

    private mutating func text() -> String {
        let choice = byte()
        if choice < 200 { return pick(Self.words) }
        // Bytes of the input as text; sd-bus passes only valid UTF-8, which decoding ensures.
        let count = Int(byte() % 40)
        var raw: [UInt8] = []
        for _ in 0..<count { raw.append(byte()) }
        return String(decoding: raw, as: UTF8.self).replacingNULs()
    }

    private mutating func blob() -> SecretBytes {
        let count: Int
        switch byte() % 8 {
        case 0: count = 0
        case 1: count = 128
        case 2: count = 16
        case 3: count = Int(byte()) * 64
        default: count = Int(byte() % 48)
        }
        var raw = [UInt8](repeating: 0, count: count)
        for index in raw.indices where index < 64 { raw[index] = byte() }
        return SecretBytes(raw)
    }

    /// A value of the complete type `type`.
    private mutating func value(of type: Substring, depth: Int) -> BusValue {
        guard let first = type.first else { return .string("") }
        switch first {
        case "y": return .byte(byte())
        case "b": return .boolean(byte() & 1 == 1)
        case "n": return .int16(Int16(truncatingIfNeeded: Int(byte()) - 128))
        case "q": return .uint16(UInt16(byte()))
        case "i": return .int32(Int32(Int8(bitPattern: byte())))
        case "u": return .uint32(UInt32(byte()))
        case "x": return .int64(Int64(Int8(bitPattern: byte())))
        case "t": return .uint64(UInt64(byte()) << 24)
        case "d": return .double(Double(byte()) / 3)
        case "s": return .string(text())
        case "o": return .objectPath(objectPath())
        case "g": return .signature(pick(["", "s", "ay", "a{sv}"]))
        case "v":
            // A variant holds what the handlers look for in one (a string, a map, bytes) or a stranger.
            let inner = depth > 3 ? "s" : pick(["s", "a{ss}", "ay", "b", "u", "ao", "(s)", "v", "a{sv}"])
            return .variant(value(of: Substring(inner), depth: depth + 1))
        case "a":
            let element = type.dropFirst()
            if element == "y" { return .bytes(blob()) }
            let count = depth > 3 ? 0 : Int(byte() % 5)
            var elements: [BusValue] = []
            for _ in 0..<count { elements.append(value(of: element, depth: depth + 1)) }
            return .array(element: String(element), elements)
        case "{":
            let inner = IntrospectableInterface.completeTypes(String(type.dropFirst().dropLast()))
            guard inner.count == 2 else { return .string("") }
            return .entry(value(of: Substring(inner[0]), depth: depth + 1), value(of: Substring(inner[1]), depth: depth + 1))
        case "(":
            let fields = IntrospectableInterface.completeTypes(String(type.dropFirst().dropLast()))
            return .structure(fields.map { value(of: Substring($0), depth: depth + 1) })
        default: return .string("")
        }
    }
}

extension String {
    /// The text without NUL characters, which no D-Bus string holds.
    fileprivate func replacingNULs() -> String { String(unicodeScalars.filter { $0 != "\0" }.map(Character.init)) }
}
