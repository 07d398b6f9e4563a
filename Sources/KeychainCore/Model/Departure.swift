/// The ways an item may leave this device: in an export archive (`keychain export`), or to
/// the other devices of its sync group. What each takes is one table, ``AttributeField``'s
/// ``AttributeField/keepsHome(_:from:)`` and ``AttributeField/goes(by:)``.
enum Departure: Sendable {
    case export, sync
}

extension Attributes {
    /// Whether an item with these attributes may leave this device by `route`: no field of
    /// the attribute table keeps it home.
    func mayLeave(by route: Departure) -> Bool {
        !AttributeField.every.contains { $0.keepsHome(self, from: route) }
    }

    /// These attributes as they go with an item that leaves by `route`: without the fields the
    /// attribute table leaves behind.
    func leaving(by route: Departure) -> Attributes {
        var leaving = self
        for field in AttributeField.every where !field.goes(by: route) { field.copy(from: Attributes(), to: &leaving) }
        return leaving
    }
}
