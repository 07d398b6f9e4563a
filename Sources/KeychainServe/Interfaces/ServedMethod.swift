/// One method as the daemon serves it: its interface and name, the signature its arguments
/// must have (checked before any handler reads them), its reply's (what `Introspect`
/// announces), whether the reply carries a secret, and its handler. Each interface's file
/// declares its rows; ``SecretServiceDaemon/methodTable`` gathers them, and dispatch,
/// `Introspect` and the argument check all read that one table.
struct ServedMethod: Sendable {
    let interface: String
    let name: String
    let arguments: String
    let reply: String
    /// Whether the reply carries a secret: sd-bus then wipes the message's buffers when it frees it.
    let carriesSecret: Bool
    let handle: @Sendable (SecretServiceDaemon, Call) throws(ServiceError) -> [BusValue]

    init(
        _ interface: String, _ name: String, _ arguments: String, _ reply: String, carriesSecret: Bool = false,
        _ handle: @escaping @Sendable (SecretServiceDaemon, Call) throws(ServiceError) -> [BusValue]
    ) {
        self.interface = interface
        self.name = name
        self.arguments = arguments
        self.reply = reply
        self.carriesSecret = carriesSecret
        self.handle = handle
    }
}

extension SecretServiceDaemon {
    /// Every method served, interface by interface.
    static let methodTable: [ServedMethod] =
        ServiceInterface.methods + CollectionInterface.methods + ItemInterface.methods + SessionInterface.methods + PromptInterface.methods
        + PropertiesInterface.methods

    /// ``methodTable`` by interface, then name.
    static let methods: [String: [String: ServedMethod]] = {
        var table: [String: [String: ServedMethod]] = [:]
        for method in methodTable {
            precondition(table[method.interface]?[method.name] == nil, "\(method.interface).\(method.name) is served twice")
            table[method.interface, default: [:]][method.name] = method
        }
        return table
    }()
}
