import Foundation

// The CoreFoundation names that code written for Apple's Security framework uses, as the
// Foundation classes they bridge to there, so that `query as CFDictionary`, `kSecClass as
// String`, `result as? Data` and `result as? [String: Any]` behave as on Apple platforms.
// (A file that also imports CoreFoundation explicitly sees two of each: drop that import, or
// write `Security.CFString`.)

/// Any CoreFoundation object (`CFTypeRef`).
public typealias CFTypeRef = AnyObject
/// A string (`NSString`).
public typealias CFString = NSString
/// A dictionary (`NSDictionary`).
public typealias CFDictionary = NSDictionary
/// A mutable dictionary (`NSMutableDictionary`).
public typealias CFMutableDictionary = NSMutableDictionary
/// Bytes (`NSData`).
public typealias CFData = NSData
/// An array (`NSArray`).
public typealias CFArray = NSArray
/// A boolean (`NSNumber`).
public typealias CFBoolean = NSNumber
/// A number (`NSNumber`).
public typealias CFNumber = NSNumber
/// An error (`NSError`).
public typealias CFError = NSError
/// Option flags.
public typealias CFOptionFlags = UInt
/// A status code: `noErr` or an `errSec...` code.
public typealias OSStatus = Int32

/// An allocator; every allocator argument here is ignored (pass nil or `kCFAllocatorDefault`).
public final class CFAllocator: Sendable {}

/// Success.
public let noErr: OSStatus = 0
/// The default allocator (nil, as on Apple platforms).
public let kCFAllocatorDefault: CFAllocator! = nil
/// True, as a CoreFoundation boolean.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// False, as a CoreFoundation boolean.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// The error's domain.
@discardableResult
public func CFErrorGetDomain(_ error: CFError) -> CFString { error.domain as NSString }
/// The error's code.
@discardableResult
public func CFErrorGetCode(_ error: CFError) -> Int { error.code }
/// The error's user info.
@discardableResult
public func CFErrorCopyUserInfo(_ error: CFError) -> CFDictionary { error.userInfo as NSDictionary }

// On Apple platforms an NSString key and a String key are the same AnyHashable; on Linux they
// are not, so a `[AnyHashable: Any]` result looked up with `kSecAttrAccount as String` (or a
// CFString) found nothing. Security brings Apple's behaviour back for the whole process.
// swift-format-ignore: AvoidRetroactiveConformances
extension NSString: @retroactive _HasCustomAnyHashableRepresentation {
    /// The string as a Swift `String`, so that it hashes and compares as one.
    public func _toCustomAnyHashable() -> AnyHashable? { AnyHashable(String(self)) }
}
