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
    static let accessibilities: [Accessibility?] = [nil] + Accessibility.allCases.map { $0 }
    static let accessControls: [AccessControl?] = [nil, .userPresence, .devicePasscode]
    static let synchronizables: [Bool?] = [nil, false, true]

    static func attributes(_ synchronizable: Bool?, _ accessibility: Accessibility?, _ accessControl: AccessControl?) -> Attributes {
        var attributes = Attributes(service: "svc", account: "acct")
        attributes.synchronizable = synchronizable
        attributes.accessibility = accessibility
        attributes.accessControl = accessControl
        return attributes
    }

    @Test("an export takes every item that is neither ThisDeviceOnly nor behind an access control, synchronizable or not")
    func exportLeavesUnboundItems() {
        for synchronizable in Self.synchronizables {
            for accessibility in Self.accessibilities {
                for accessControl in Self.accessControls {
                    let attributes = Self.attributes(synchronizable, accessibility, accessControl)
                    let expected = !Self.deviceBound.contains(accessibility) && accessControl == nil
                    #expect(Self.export(attributes) == expected, "\(String(describing: synchronizable)) \(String(describing: accessibility)) \(String(describing: accessControl))")
                }
            }
        }
    }

    @Test("sync takes only synchronizable items that are neither ThisDeviceOnly nor behind an access control")
    func syncLeavesSynchronizableUnboundItems() {
        for synchronizable in Self.synchronizables {
            for accessibility in Self.accessibilities {
                for accessControl in Self.accessControls {
                    let attributes = Self.attributes(synchronizable, accessibility, accessControl)
                    let expected = synchronizable == true && !Self.deviceBound.contains(accessibility) && accessControl == nil
                    #expect(Self.sync(attributes) == expected, "\(String(describing: synchronizable)) \(String(describing: accessibility)) \(String(describing: accessControl))")
                }
            }
        }
    }

    static func export(_ attributes: Attributes) -> Bool { ItemArchive.mayLeave(attributes) }
    static func sync(_ attributes: Attributes) -> Bool { SyncChange.travels(attributes) }
}
