/// One row of the item table as read: its id, class and protection (decoded from their codes),
/// its digests and sealed parts as stored, and its attributes once opened.
struct ItemRow {
    var id: Int64
    var itemClass: ItemClass
    var accessibility: Accessibility
    var accessControl: AccessControl?
    var identity: [UInt8]
    var sealedAttributes: [UInt8]
    /// The sealed value, when the read asked for it (``ItemTable/sealedValue(of:)`` reads it later).
    var value: [UInt8]?
    /// The generation that sealed the row; 0 for a row still sealed the format-1 way.
    var generation: UInt64
    /// The scope digest as stored (checked against the attributes wherever it selected the row).
    var scope: [UInt8]
    var attributes: Attributes?

    /// The protection code the row is stored and sealed under: its class and access control.
    var protection: UInt8 { RecordCoding.protectionCode(accessibility, accessControl) }
}
