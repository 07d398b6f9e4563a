/// `org.freedesktop.DBus.Properties` over the objects' own properties.
enum PropertiesInterface {
    static let name = "org.freedesktop.DBus.Properties"

    static let methods = ["Get": ("ss", "v"), "GetAll": ("s", "a{sv}"), "Set": ("ssv", "")].sorted { $0.key < $1.key }.map { member, signatures in
        ServedMethod(name, member, signatures.0, signatures.1) { (daemon, call) throws(ServiceError) in try daemon.propertiesCall(member, call) }
    }
}

extension SecretServiceDaemon {
    static let propertiesInterface = PropertiesInterface.name

    func propertiesCall(_ member: String, _ call: Call) throws(ServiceError) -> [BusValue] {
        let interfaces = call.interfaces
        let interface = call.arguments[0].string ?? ""
        guard interface.isEmpty || interfaces.contains(interface), interface != Self.propertiesInterface else {
            throw ServiceError(.unknownInterface, "this object has no interface \(interface)")
        }
        switch member {
        case "GetAll":
            var all: [(String, BusValue)] = []
            for each in interfaces where each == interface || (interface.isEmpty && each != Self.propertiesInterface) {
                for (name, value) in try properties(of: call.object, each) { all.append((name, try value())) }
            }
            return [.properties(all)]
        case "Get":
            let name = call.arguments[1].string ?? ""
            for each in interfaces where each == interface || (interface.isEmpty && each != Self.propertiesInterface) {
                if let value = try properties(of: call.object, each).first(where: { $0.name == name })?.value { return [.variant(try value())] }
            }
            throw .unknownProperty(interface, name)
        default:
            let name = call.arguments[1].string ?? ""
            let value = call.arguments[2].variantContents!
            switch call.object {
            case .collection where interface != SyncCollectionInterface.name: try setCollectionProperty(name, value, call)
            case .item: try setItemProperty(name, value, call)
            default:
                if try properties(of: call.object, interface).contains(where: { $0.name == name }) { throw .propertyReadOnly(name) }
                throw .unknownProperty(interface, name)
            }
            return []
        }
    }

    /// A property's name, and how to read its value now: a `Get` reads only the one it names
    /// (a collection's `Locked` must not list its items).
    typealias Property = (name: String, value: () throws(ServiceError) -> BusValue)

    /// The properties of `interface` on the object.
    func properties(of object: ObjectPath, _ interface: String) throws(ServiceError) -> [Property] {
        switch (object, interface) {
        case (.service, ServiceInterface.name):
            let names = collections.names
            return [("Collections", { () throws(ServiceError) in .paths(names.map(ObjectPath.collectionPath)) })]
        case (.service, IdentityInterface.name):
            return identityProperties()
        case (.collection, CollectionInterface.name):
            return collectionProperties(try collection(object))
        case (.collection, SyncCollectionInterface.name):
            return syncCollectionProperties()
        case (.item(_, _, let id), ItemInterface.name):
            return itemProperties(try collection(object), id)
        default:
            return []
        }
    }
}
