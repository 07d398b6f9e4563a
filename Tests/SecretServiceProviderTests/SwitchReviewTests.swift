import Foundation
import KeychainServe
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Attacks on the switch to `keychain serve`, run as the ordinary user who makes it, against a
/// real gnome-keyring: what a program stores into the old provider while the switch runs is
/// either in the vault when it exits 0, or still served by the old provider when it fails.
@Suite(
    "a switch to keychain serve loses nothing stored while it runs",
    .switchable)
struct SwitchReviewTests {
    /// Whether the system's python3 has dbus-python, whose Item.SetSecret the ordinary user runs.
    static let hasDBusPython = (try? Subprocess.run("/usr/bin/python3", ["-c", "import dbus"], environment: ["PATH": "/usr/bin:/bin"]))?.status == 0

    /// gnome-keyring holding the item each attack changes ('Deploy token', `service`
    /// `api.example.com`, `old-secret`, the first login item) and 40 items after it: the change
    /// lands while the switch still moves.
    static func keyringHoldingTheItem() throws -> SwitchTakesTests.KeyringSession {
        let setup = try SwitchTakesTests.KeyringSession()
        #expect(setup.keyring > 0)
        #expect(try setup.store("Deploy token", ["service", "api.example.com"], "old-secret") == 0)
        for index in 1...40 { #expect(try setup.store("filler\(index)", ["filler", "\(index)"], "f\(index)") == 0) }
        return setup
    }

    /// How an attack on the switch ended, as far as every attack checks alike.
    enum Outcome {
        /// The program's change did not land (it came as the old provider stopped): the
        /// listed secret is what the next call reads (checked).
        case changeFailed
        /// The switch exited 0, and the next call reads the newer secret (checked).
        case switched
        /// The switch failed: what it said is the caller's to check.
        case failed
    }

    /// Sorts the switch's end: what `served` must be after a change that did not land, or
    /// after a switch that exited 0, is checked here.
    static func outcome(of switched: CommandResult, served: String, home: String) -> Outcome {
        guard FileManager.default.fileExists(atPath: home + "/changed") else {
            let why = (try? String(contentsOfFile: home + "/change.err", encoding: .utf8)) ?? ""
            #expect(served == "old-secret", "\(why)exit \(switched.status), a change that failed, and the next call reads '\(served)': \(switched.stderr)")
            return .changeFailed
        }
        guard switched.status == 0 else { return .failed }
        #expect(served == "new-secret", "exit 0, and keychain serve reads '\(served)': \(switched.stderr)")
        return .switched
    }

    /// Starts, as the user, a program that waits until the switch reads the secret of the item
    /// at `path` and then stores over that item's attributes with `secret` (what `secret-tool
    /// store` does for a program that saves a changed password): gnome-keyring keeps the item's
    /// path and signals it as created. Writes `changed` into the home once the store succeeded.
    static func storeOver(
        _ setup: SwitchTakesTests.KeyringSession, path: String, label: String, attributes: [String], secret: String, after member: String = "GetSecret"
    ) throws -> pid_t {
        let home = setup.session.directory.path
        let match = "type='method_call',interface='org.freedesktop.Secret.Item',member='\(member)',path='\(path)'"
        let script = """
            /usr/bin/dbus-monitor --session "\(match)" > \(home)/monitor 2>&1 & monitor=$!
            for i in $(seq 1 3000); do grep -q 'member=\(member)' \(home)/monitor && break; sleep 0.005; done
            printf %s '\(secret)' | /usr/bin/secret-tool store --label='\(label)' \(attributes.joined(separator: " ")) && echo changed > \(home)/changed
            kill $monitor; wait $monitor
            """
        let (setpriv, wrapped) = OrdinaryUser.wrap("/bin/sh", ["-c", script])
        let pid = try Subprocess.start(setpriv, wrapped, environment: setup.session.environment)
        // Until the monitor is on the bus: a switch started before would be read unwatched.
        for _ in 0..<400 where !((try? String(contentsOfFile: home + "/monitor", encoding: .utf8)) ?? "").contains("NameAcquired") { usleep(10_000) }
        return pid
    }

    @Test(
        "an item stored over after the switch listed it (same attributes, same path in gnome-keyring) is not left behind: exit 0 only with the newer secret served",
        arguments: [false, true])
    func itemStoredOverAfterListingIsNotLost(keepSource: Bool) throws {
        let setup = try Self.keyringHoldingTheItem()
        let changer = try Self.storeOver(
            setup, path: "/org/freedesktop/secrets/collection/login/1", label: "Deploy token", attributes: ["service", "api.example.com"], secret: "new-secret")

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"] + (keepSource ? ["--keep-source"] : []))
        _ = Subprocess.wait(for: changer)
        let served = try setup.lookup(["service", "api.example.com"])
        switch Self.outcome(of: switched, served: served, home: setup.session.directory.path) {
        case .changeFailed: return
        case .switched: #expect(setup.session.servedVaultPath() == setup.session.vaultPath)
        case .failed:
            // Still served by gnome-keyring, or named as left in its files.
            let named = switched.stderr.contains("after its last listing") && switched.stderr.contains("/org/freedesktop/secrets/collection/login/1")
            #expect(served == "new-secret" || named, "exit \(switched.status), the next call reads '\(served)', and the item is not named: \(switched.stderr)")
            #expect(switched.stderr.contains("run this again") || switched.stderr.contains("command again") || switched.stderr.contains("--conflict replace"), "\(switched.stderr)")
        }
    }

    @Test(
        "an item whose secret alone is changed (Item.SetSecret, which gnome-keyring signals to no one) after the switch listed it is neither deleted nor left behind with the older secret moved",
        .enabled(if: Self.hasDBusPython, "needs python3 with dbus-python (python3-dbus, which python3-dbusmock brings)"), arguments: [false, true])
    func secretChangedWithoutSignalAfterListingIsNotLost(keepSource: Bool) throws {
        let setup = try Self.keyringHoldingTheItem()
        // Connected before the switch starts (dbus-python: the system python3 the user can run), it
        // changes the secret the moment the switch has read it.
        let changer = try Self.startWatchedProgram(
            preparing: "item = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets/collection/login/1')",
            acting: """
                secret = (session, dbus.ByteArray(b''), dbus.ByteArray(b'new-secret'), 'text/plain')
                item.SetSecret(dbus.Struct(secret, signature='oayays'), dbus_interface='org.freedesktop.Secret.Item')
                """,
            when: "GetSecret", setup.session)

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"] + (keepSource ? ["--keep-source"] : []))
        _ = Subprocess.wait(for: changer)
        let served = try setup.lookup(["service", "api.example.com"])
        switch Self.outcome(of: switched, served: served, home: setup.session.directory.path) {
        case .changeFailed, .switched: return
        case .failed:
            #expect(served == "new-secret", "exit \(switched.status), and the next call reads '\(served)': \(switched.stderr)")
            // As the command says: run again with --conflict replace, and the newer version is taken.
            #expect(switched.stderr.contains("--conflict replace"), "\(switched.stderr)")
            let again = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch", "--conflict", "replace"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try setup.lookup(["service", "api.example.com"]) == "new-secret")
            #expect(setup.session.servedVaultPath() == setup.session.vaultPath)
        }
    }

    /// Starts a program (Python with dbus-python, as the ordinary user, with a Secret Service
    /// `session` open) beside a `dbus-monitor` of the calls of `member` on the first login item,
    /// and waits until both are ready: the program runs `preparing`, then `acting` the moment the
    /// monitor shows the switch making that call, and writes `changed` into the home once it
    /// did (its errors go to `change.err`).
    static func startWatchedProgram(preparing: String, acting: String, when member: String, _ session: OrdinaryUserSession) throws -> pid_t {
        let home = session.directory.path, name = "change"
        let program = """
            import sys, time, dbus
            bus = dbus.SessionBus()
            service = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets')
            _, session = service.OpenSession('plain', dbus.String('', variant_level=1), dbus_interface='org.freedesktop.Secret.Service')
            \(preparing)
            open(sys.argv[1] + '/ready', 'w').close()
            for _ in range(6000):
                if 'member=\(member)' in open(sys.argv[1] + '/monitor').read():
                    break
                time.sleep(0.002)
            \(acting)
            open(sys.argv[1] + '/changed', 'w').close()
            """
        try program.write(toFile: home + "/\(name).py", atomically: true, encoding: .utf8)
        let match = "type='method_call',interface='org.freedesktop.Secret.Item',member='\(member)',path='/org/freedesktop/secrets/collection/login/1'"
        let script = """
            /usr/bin/dbus-monitor --session "\(match)" > \(home)/monitor 2>&1 & monitor=$!
            /usr/bin/python3 \(home)/\(name).py \(home) 2> \(home)/\(name).err
            kill $monitor; wait $monitor
            """
        let (setpriv, wrapped) = OrdinaryUser.wrap("/bin/sh", ["-c", script])
        let changer = try Subprocess.start(setpriv, wrapped, environment: session.environment)
        for _ in 0..<1000
        where !FileManager.default.fileExists(atPath: home + "/ready") || !((try? String(contentsOfFile: home + "/monitor", encoding: .utf8)) ?? "").contains("NameAcquired") {
            usleep(10_000)
        }
        return changer
    }

    /// Stores an item into the memory-only `session` collection of whatever serves the user's
    /// bus (dbus-python: secret-tool stores only into the default one); its path, or the error.
    static func storeInSession(_ session: OrdinaryUserSession, attributes: [String: String], secret: String) throws -> CommandResult {
        let program = """
            import sys, dbus
            bus = dbus.SessionBus()
            service = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets')
            _, opened = service.OpenSession('plain', dbus.String('', variant_level=1), dbus_interface='org.freedesktop.Secret.Service')
            collection = bus.get_object('org.freedesktop.secrets', service.ReadAlias('session', dbus_interface='org.freedesktop.Secret.Service'))
            attributes = dbus.Dictionary(dict(zip(sys.argv[1::2], sys.argv[2::2])), signature='ss')
            properties = {'org.freedesktop.Secret.Item.Label': 'session item', 'org.freedesktop.Secret.Item.Attributes': attributes}
            secret = dbus.Struct((opened, dbus.ByteArray(b''), dbus.ByteArray(sys.stdin.buffer.read()), 'text/plain'), signature='oayays')
            item, _ = collection.CreateItem(properties, secret, False, dbus_interface='org.freedesktop.Secret.Collection')
            print(item)
            """
        let file = session.directory.path + "/store-session.py"
        try program.write(toFile: file, atomically: true, encoding: .utf8)
        return try session.run("/usr/bin/python3", [file] + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }, input: secret)
    }

    @Test(
        "serve --install does not replace another vault's keychain serve while it holds items in its memory-only session collection, which would end with it",
        .enabled(if: Self.hasDBusPython, "needs python3 with dbus-python (python3-dbus, which python3-dbusmock brings)"))
    func installKeepsAnotherServeHoldingSessionItems() throws {
        let session = try OrdinaryUserSession()
        let other = session.directory.path + "/other.keychain"
        let old = try session.startServing(["--vault", other])
        defer { kill(old, SIGTERM) }
        #expect(session.waitForProvider())
        let stored = try Self.storeInSession(session, attributes: ["memo": "1"], secret: "volatile")
        #expect(stored.status == 0 && stored.output.contains("/collection/session/"), "\(stored.stderr)")
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "memo", "1"]).output == "volatile")

        let installed = try session.keychain(["serve", "--install"])
        // Whatever it says, the item the other serve holds in memory is still served.
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "memo", "1"]).output == "volatile", "\(installed.stderr)")
        #expect(session.ownerProcessID() == old, "\(installed.stderr)")
        #expect(installed.stderr.contains("session collection"), "\(installed.stderr)")
        if let owner = session.ownerProcessID(), owner != old { kill(owner, SIGTERM) }
    }

    @Test(
        "the switch does not stop gnome-keyring while it holds items in its memory-only session collection: it fails, and they are still served",
        .enabled(if: Self.hasDBusPython, "needs python3 with dbus-python (python3-dbus, which python3-dbusmock brings)"))
    func switchKeepsAProviderHoldingSessionItems() throws {
        let setup = try SwitchTakesTests.KeyringSession()
        #expect(try setup.store("Deploy token", ["service", "api.example.com"], "s3cret") == 0)
        let stored = try Self.storeInSession(setup.session, attributes: ["memo": "1"], secret: "volatile")
        #expect(stored.status == 0 && stored.output.contains("/collection/session/"), "\(stored.stderr)")

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        #expect(switched.status != 0, "\(switched.stderr)")
        #expect(switched.stderr.contains("memory-only session collection"), "\(switched.stderr)")
        #expect(setup.session.ownerProcessID() == setup.keyring)
        #expect(try setup.lookup(["memo", "1"]) == "volatile")
        #expect(try setup.lookup(["service", "api.example.com"]) == "")
    }

    @Test(
        "back with --switch does not stop keychain serve of this vault while it holds items in its memory-only session collection: it fails, and they are still served",
        .enabled(if: Self.hasDBusPython, "needs python3 with dbus-python (python3-dbus, which python3-dbusmock brings)"))
    func switchBackKeepsAServeHoldingSessionItems() throws {
        let session = try OrdinaryUserSession()
        #expect(try session.keychain(["serve", "--install"]).status == 0)
        // The first call starts keychain serve by activation.
        let stored = try Self.storeInSession(session, attributes: ["memo": "1"], secret: "volatile")
        #expect(stored.status == 0 && stored.output.contains("/collection/session/"), "\(stored.stderr)")
        let serving = try #require(session.ownerProcessID())
        defer { kill(serving, SIGTERM) }

        let back = try session.keychain(["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--switch"])
        #expect(back.status != 0, "\(back.stderr)")
        #expect(back.stderr.contains("memory-only session collection"), "\(back.stderr)")
        #expect(session.ownerProcessID() == serving)
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "memo", "1"]).output == "volatile")
    }

    @Test(
        "a provider of another user on the bus is neither given the vault's secrets nor lets its items into the vault: both moves refuse it, moving nothing"
    )
    func providerOfAnotherUserIsRefused() throws {
        let session = try OrdinaryUserSession()
        // The user's bus, admitting every user (as a bus shared between users does): root's
        // provider on it is, to the user, another user's.
        let home = session.directory.path
        let configuration =
            "<busconfig><type>session</type><listen>unix:path=\(home)/shared-bus</listen>"
            + "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n"
        try configuration.write(toFile: home + "/shared-bus.conf", atomically: true, encoding: .utf8)
        let (uid, gid) = try OrdinaryUser.ids()
        chown(home + "/shared-bus.conf", uid, gid)
        let (setpriv, arguments) = OrdinaryUser.wrap("/usr/bin/dbus-daemon", ["--config-file=\(home)/shared-bus.conf", "--fork", "--print-address=1", "--print-pid=1"])
        let bus = try Subprocess.run(setpriv, arguments, environment: session.environment)
        let lines = bus.output.split(separator: "\n").map(String.init)
        try #require(bus.status == 0 && lines.count >= 2, "\(bus.stderr)")
        let busPID = try #require(pid_t(lines[1]))
        defer { kill(busPID, SIGTERM) }
        let user = ["DBUS_SESSION_BUS_ADDRESS": lines[0]]
        func owner() -> String {
            (try? session.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"],
                environment: user))?.output ?? ""
        }

        let (servePriv, serveArguments) = OrdinaryUser.wrap(session.keychain, ["serve"])
        let mine = try Subprocess.launch(servePriv, serveArguments, environment: session.environment.merging(user) { $1 }, errorFile: "/dev/null")
        close(mine.stdin)
        for _ in 0..<400 where !owner().contains("uint32 \(mine.pid)") { usleep(25_000) }
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com"], input: "s3cret", environment: user).status == 0)
        kill(mine.pid, SIGTERM)
        _ = Subprocess.wait(for: mine.pid)

        let rootHome = TemporaryDirectory()
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": rootHome.path, "XDG_DATA_HOME": rootHome.path + "/data", "XDG_CONFIG_HOME": rootHome.path + "/config",
            "XDG_RUNTIME_DIR": rootHome.path, "KEYCHAIN_KERNEL_KEYRING": "off", "DBUS_SESSION_BUS_ADDRESS": lines[0],
        ]
        let other = try Subprocess.launch(KeychainExecutable.path, ["serve"], environment: environment, errorFile: rootHome.path + "/serve.err")
        close(other.stdin)
        defer {
            kill(other.pid, SIGTERM)
            _ = Subprocess.wait(for: other.pid)
        }
        for _ in 0..<400 where !owner().contains("uint32 \(other.pid)") { usleep(25_000) }
        try #require(
            owner().contains("uint32 \(other.pid)"),
            "root's keychain serve did not take the name: \((try? String(contentsOfFile: rootHome.path + "/serve.err", encoding: .utf8)) ?? "")")
        let planted = try Subprocess.run(
            "/usr/bin/secret-tool", ["store", "--label=Planted", "service", "planted"], environment: environment, input: Data("attacker".utf8))
        #expect(planted.status == 0, "\(planted.stderr)")

        let back = try session.run(session.keychain, ["migrate", "--foreign", "--from", "vault", "--to", "secret-service"], environment: user)
        #expect(back.status != 0, "\(back.stderr)")
        #expect(back.stderr.contains("another user"), "\(back.stderr)")
        let into = try session.run(session.keychain, ["migrate", "--foreign", "--from", "secret-service", "--to", "vault"], environment: user)
        #expect(into.status != 0, "\(into.stderr)")
        // Root's provider holds only what root stored; the user's vault only what the user stored.
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com"], environment: environment).output == "")
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "planted"], environment: environment).output == "attacker")
        let listed = try session.run(session.keychain, ["list"], environment: user)
        #expect(!listed.output.contains("planted"), "\(listed.output)")
    }

    @Test(
        "back with --switch stops a keychain serve of this vault left waiting in the bus's queue, which would take the name serving the emptied vault once the provider ends"
    )
    func switchBackStopsAWaitingServeOfThisVault() throws {
        let setup = try SwitchTakesTests.KeyringSession()
        #expect(setup.keyring > 0)
        // What a switch into the vault leaves when the old provider does not end: keychain serve waiting for the name.
        let (setpriv, arguments) = OrdinaryUser.wrap(setup.session.keychain, ["serve", "--queue"])
        let queued = try Subprocess.launch(
            setpriv, arguments, environment: setup.session.environment.merging(setup.passphraseEnvironment) { $1 }, errorFile: "/dev/null")
        close(queued.stdin)
        defer {
            kill(queued.pid, SIGTERM)
            _ = Subprocess.wait(for: queued.pid)
        }
        func queue() -> String {
            (try? setup.session.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ListQueuedOwners", "string:org.freedesktop.secrets"]))?.output ?? ""
        }
        for _ in 0..<400 where queue().components(separatedBy: "string \"").count < 3 { usleep(25_000) }
        try #require(queue().components(separatedBy: "string \"").count == 3, "keychain serve --queue did not wait for the name: \(queue())")

        let back = try setup.keychain(["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--switch"])
        #expect(back.status == 0, "\(back.stderr)")
        var ended = false
        for _ in 0..<400 where !ended {
            ended = SwitchTakesTests.hasEnded(queued.pid)
            if !ended { usleep(25_000) }
        }
        #expect(ended, "keychain serve of this vault still waits for the name: \(queue()) \(back.stderr)")
        #expect(queue().components(separatedBy: "string \"").count == 2, "\(queue())")
    }

    @Test(
        "an idle keychain serve does not stop while an old provider waits in the bus's queue (gnome-keyring started again after a switch): it would get the name, undoing the switch"
    )
    func idleServeKeepsTheNameFromAWaitingProvider() throws {
        let session = try OrdinaryUserSession()
        // Long enough for gnome-keyring to start and join the queue before the first idle check counts.
        let serving = try session.startServing(["--idle-exit", "5"])
        defer { session.stopServing() }
        #expect(session.waitForProvider())
        let started = try session.run("/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--daemonize"], input: "test-password")
        #expect(started.status == 0, "\(started.stderr)")
        func queued() -> [String] {
            let asked = try? session.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ListQueuedOwners", "string:org.freedesktop.secrets"])
            return (asked?.output ?? "").components(separatedBy: "string \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }
        for _ in 0..<400 where queued().count < 2 { usleep(25_000) }
        let waiting = queued()
        try #require(waiting.count == 2, "gnome-keyring did not wait in the queue: \(waiting)")
        defer {
            // gnome-keyring, whichever place it has now.
            let asked = try? session.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:\(waiting[1])"])
            if let pid = asked?.output.split(separator: " ").last.flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), pid != serving { kill(pid, SIGTERM) }
        }
        // The idle time passes, and several idle checks (one a second) after it.
        usleep(8_000_000)
        #expect(session.ownerProcessID() == serving, "the name went to \(session.ownerProcessID().map(String.init) ?? "nobody")")
        #expect(session.servedVaultPath() == session.vaultPath)
    }

    @Test(
        "an item stored again after the switch deleted it (a new item of the same attributes) fails the next move as a conflict, still served by gnome-keyring, and the failure does not deny what the first move took",
        .enabled(if: Self.hasDBusPython, "needs python3 with dbus-python (python3-dbus, which python3-dbusmock brings)"))
    func itemStoredAgainAfterItsDeletionIsNotLost() throws {
        let setup = try Self.keyringHoldingTheItem()
        // Connected before the switch starts (dbus-python), it stores the item again the moment
        // the switch deletes it: a new item, of the same attributes, in the same collection.
        let changer = try Self.startWatchedProgram(
            preparing: """
                collection = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets/collection/login')
                attributes = dbus.Dictionary({'service': 'api.example.com'}, signature='ss')
                properties = {'org.freedesktop.Secret.Item.Label': 'Deploy token', 'org.freedesktop.Secret.Item.Attributes': attributes}
                secret = dbus.Struct((session, dbus.ByteArray(b''), dbus.ByteArray(b'new-secret'), 'text/plain'), signature='oayays')
                """,
            acting: "collection.CreateItem(properties, secret, True, dbus_interface='org.freedesktop.Secret.Collection')",
            when: "Delete", setup.session)

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        _ = Subprocess.wait(for: changer)
        let served = try setup.lookup(["service", "api.example.com"])
        switch Self.outcome(of: switched, served: served, home: setup.session.directory.path) {
        case .changeFailed, .switched: return
        case .failed:
            let named = switched.stderr.contains("after its last listing")
            #expect(served == "new-secret" || named, "exit \(switched.status), the next call reads '\(served)': \(switched.stderr)")
            #expect(!switched.stderr.contains("nothing was moved") || switched.stderr.contains("earlier moves"), "\(switched.stderr)")
        }
    }

    @Test("the switch with --skip-locked does not stop a provider whose locked collection stayed behind: it fails with status 3, and the provider still serves")
    func switchKeepsAProviderHoldingLockedCollections() throws {
        let setup = try SwitchTakesTests.KeyringSession()
        #expect(try setup.store("Deploy token", ["service", "api.example.com"], "s3cret") == 0)
        let locked = try setup.session.run(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
        #expect(locked.status == 0, "\(locked.stderr)")

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch", "--skip-locked"])
        #expect(switched.status == 3, "\(switched.stderr)")
        #expect(switched.stderr.contains("locked collection(s) ('Login') stayed behind"), "\(switched.stderr)")
        #expect(setup.session.ownerProcessID() == setup.keyring)
        #expect(!SwitchTakesTests.hasEnded(setup.keyring))
    }
}
