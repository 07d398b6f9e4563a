import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// What may leave this device, and with which attributes, through an export and through sync:
/// each route's answer for every combination of the attributes that decide it.
@Suite("What may leave this device")
struct DepartureRuleTests {
    /// The classes bound to this machine, spelled out rather than asked of `Accessibility`.
    static let deviceBound: Set<Accessibility?> = [
        .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly,
    ]

    /// Calls `body` with every combination of synchronizable, accessibility and access control
    /// (each unset too), and whether the item is bound to this device.
    static func forEveryCombination(_ body: (_ attributes: Attributes, _ synchronizable: Bool?, _ bound: Bool) -> Void) {
        for synchronizable in [nil, false, true] as [Bool?] {
            for accessibility in [nil] + Accessibility.allCases.map({ $0 }) as [Accessibility?] {
                for accessControl in [nil, .userPresence, .devicePasscode] as [AccessControl?] {
                    var attributes = Attributes(service: "svc", account: "acct")
                    attributes.synchronizable = synchronizable
                    attributes.accessibility = accessibility
                    attributes.accessControl = accessControl
                    body(attributes, synchronizable, Self.deviceBound.contains(accessibility) || accessControl != nil)
                }
            }
        }
    }

    @Test("an export takes every item that is neither ThisDeviceOnly nor behind an access control, synchronizable or not")
    func exportLeavesUnboundItems() {
        Self.forEveryCombination { attributes, _, bound in
            #expect(attributes.mayLeave(by: .export) == !bound, "\(attributes)")
        }
    }

    @Test("sync takes only synchronizable items that are neither ThisDeviceOnly nor behind an access control")
    func syncLeavesSynchronizableUnboundItems() {
        Self.forEveryCombination { attributes, synchronizable, bound in
            #expect(attributes.mayLeave(by: .sync) == (synchronizable == true && !bound), "\(attributes)")
        }
    }

    @Test("an exported item leaves without its dates; a synced one carries every attribute")
    func exportDropsDatesSyncKeepsThem() {
        var attributes = Attributes(service: "svc", account: "acct", synchronizable: true, accessibility: .afterFirstUnlock)
        attributes.label = "label"
        attributes.comment = "comment"
        attributes.creationDate = Date(timeIntervalSince1970: 1_000)
        attributes.modificationDate = Date(timeIntervalSince1970: 2_000)
        let exported = attributes.leaving(by: .export)
        for field in AttributeField.allCases {
            #expect(field.sameValue(in: exported, and: attributes) == !field.isDate, "\(field)")
        }
        #expect(exported.creationDate == nil && exported.modificationDate == nil)
        let synced = attributes.leaving(by: .sync)
        for field in AttributeField.allCases { #expect(field.sameValue(in: synced, and: attributes), "\(field)") }
    }
}
