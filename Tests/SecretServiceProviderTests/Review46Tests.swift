import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a review of the user's session and `keychain serve` (#46) found, each as the slip it
/// proves fixed, with real clients on a private bus.
@Suite(
    "Review of #46: keychain serve and the user's lock state", .serialized,
    .enabled(if: ServedVault.unavailableReason == nil && PythonClient.unavailableReason == nil, "\(ServedVault.unavailableReason ?? PythonClient.unavailableReason ?? "")"))
struct ServeReview46Tests {
    /// A pinentry that answers every GETPIN with the passphrase in `file` (a person who types it).
    static func answeringPinentry(in directory: TemporaryDirectory, passphraseFile file: String) -> String {
        let program = directory.path + "/answering-pinentry"
        let script = """
            #!/bin/sh
            echo 'OK ready'
            while read -r line; do
              case "$line" in
                GETPIN*) printf 'D %s\\nOK\\n' "$(cat '\(file)')";;
                BYE*) echo OK; exit 0;;
                *) echo OK;;
              esac
            done

            """
        ProgramFile.write(script, to: program)
        return program
    }

    @Test("where the kernel keyring is off, a serve its pinentry unlocked locks after the idle time without a call, and hands out no secret")
    func pinentryUnlockWithoutKernelKeyringLocksWhenIdle() throws {
        // ServedVault keeps the kernel keyring off, as a container that refuses keyctl does.
        var pinentry = ""
        let served = try PinentryPromptTests.lockedVault { served, file in
            pinentry = Self.answeringPinentry(in: served.directory, passphraseFile: file)
            return ["KEYCHAIN_PINENTRY": pinentry, "DISPLAY": ":99", "KEYCHAIN_UNLOCK_TIMEOUT": "2"]
        }
        let client = try Subprocess.launchReadingOutput(
            PythonClient.python, [PythonClient.scripts + "/unlock_prompt.py", "answer"], environment: served.environment)
        let answered = Subprocess.readAll(client.stdout)
        close(client.stdout)
        _ = Subprocess.wait(for: client.pid)
        #expect(answered.hasSuffix("secret value\n"), "the pinentry's unlock: \(answered) \(served.serveErrors)")

        // From here the person cancels any pinentry: a client's lookup of a locked vault asks
        // for an unlock, which must not be what opens it.
        let cancelling = "#!/bin/sh\necho 'OK ready'\nwhile read -r line; do case \"$line\" in GETPIN*) echo 'ERR 83886179 Operation cancelled';; *) echo OK;; esac; done\n"
        #expect(ProgramFile.write(cancelling, to: pinentry))
        // Past the idle time with no call (a look once a second ends it).
        Thread.sleep(forTimeInterval: 4.5)
        let locked = try served.run(
            "/usr/bin/dbus-send", SecretServiceProperty.get("Locked", of: "org.freedesktop.Secret.Collection", at: "/org/freedesktop/secrets/collection/login"))
        #expect(locked.output.contains("boolean true"), "the collection's Locked after the idle time: \(locked.output)")
        let later = try served.run("/usr/bin/secret-tool", ["lookup", "service", "x"])
        #expect(later.output.isEmpty, "a secret after the idle time: \(served.serveErrors)")
        #expect(kill(served.servePID, 0) == 0, "the daemon stopped")
    }
}
