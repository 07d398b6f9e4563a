/// `org.freedesktop.DBus.Introspectable` on every object: the XML description that generic
/// tools (`gdbus introspect`, `busctl`) and clients that build their proxies from it (Qt's
/// `QDBusInterface`) read, built from the same tables that check calls.
enum IntrospectableInterface {
    static let name = "org.freedesktop.DBus.Introspectable"

    /// Each interface's properties: name, type, and whether clients may set it.
    static let properties: [String: [(String, String, Bool)]] = [
        ServiceInterface.name: [("Collections", "ao", false)],
        IdentityInterface.name: IdentityInterface.properties,
        SyncCollectionInterface.name: SyncCollectionInterface.properties,
        CollectionInterface.name: [("Items", "ao", false), ("Label", "s", true), ("Locked", "b", false), ("Created", "t", false), ("Modified", "t", false)],
        ItemInterface.name: [("Locked", "b", false), ("Attributes", "a{ss}", true), ("Label", "s", true), ("Created", "t", false), ("Modified", "t", false)],
    ]

    /// Each interface's signals and their signatures.
    static let signals: [String: [(String, String)]] = [
        ServiceInterface.name: [("CollectionCreated", "o"), ("CollectionDeleted", "o"), ("CollectionChanged", "o")],
        CollectionInterface.name: [("ItemCreated", "o"), ("ItemDeleted", "o"), ("ItemChanged", "o")],
        PromptInterface.name: [("Completed", "bv")],
    ]

    /// The description of an object answering `interfaces`.
    static func description(of interfaces: [String]) -> String {
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" \"\">\n<node>\n"
        xml += " <interface name=\"\(name)\">\n  <method name=\"Introspect\"><arg name=\"xml\" type=\"s\" direction=\"out\"/></method>\n </interface>\n"
        for interface in interfaces where interface != SecretServiceDaemon.propertiesInterface {
            xml += " <interface name=\"\(interface)\">\n"
            for method in (SecretServiceDaemon.methods[interface] ?? [:]).values.sorted(by: { $0.name < $1.name }) {
                xml += "  <method name=\"\(method.name)\">"
                for type in completeTypes(method.arguments) { xml += "<arg type=\"\(type)\" direction=\"in\"/>" }
                for type in completeTypes(method.reply) { xml += "<arg type=\"\(type)\" direction=\"out\"/>" }
                xml += "</method>\n"
            }
            for (property, type, writable) in properties[interface] ?? [] {
                xml += "  <property name=\"\(property)\" type=\"\(type)\" access=\"\(writable ? "readwrite" : "read")\"/>\n"
            }
            for (signal, signature) in signals[interface] ?? [] {
                xml += "  <signal name=\"\(signal)\">" + completeTypes(signature).map { "<arg type=\"\($0)\"/>" }.joined() + "</signal>\n"
            }
            xml += " </interface>\n"
        }
        if interfaces.contains(SecretServiceDaemon.propertiesInterface) {
            xml += " <interface name=\"\(SecretServiceDaemon.propertiesInterface)\">\n"
            xml += "  <method name=\"Get\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"out\"/></method>\n"
            xml += "  <method name=\"GetAll\"><arg type=\"s\" direction=\"in\"/><arg type=\"a{sv}\" direction=\"out\"/></method>\n"
            xml += "  <method name=\"Set\"><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"v\" direction=\"in\"/></method>\n"
            xml += "  <signal name=\"PropertiesChanged\"><arg type=\"s\"/><arg type=\"a{sv}\"/><arg type=\"as\"/></signal>\n"
            xml += " </interface>\n"
        }
        return xml + "</node>\n"
    }

    /// A signature split into its complete types (`a{sv}(oayays)b` into three).
    static func completeTypes(_ signature: String) -> [String] {
        var types: [String] = [], current = "", depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }
}
