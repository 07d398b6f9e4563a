import Glibc
import Synchronization
import Testing

@testable import KeychainCore

@Suite("Secret Service call timing: the gate and the watchdog keep their deadlines")
struct CallTimingTests {
    @Test("a gate held by one caller turns the next away once its deadline passes, and lets it in after leave")
    func gateWaitIsBoundedByTheDeadline() {
        let gate = TimedGate()
        #expect(gate.enter(by: Deadline(after: .seconds(5))))
        #expect(!gate.enter(by: Deadline(after: .milliseconds(30))))
        gate.leave()
        #expect(gate.enter(by: Deadline(after: .milliseconds(30))))
        gate.leave()
    }

    @Test("the watchdog runs an action whose deadline passed, and never one disarmed in time")
    func watchdogFiresOnlyWhatIsDue() {
        let fired = Atomic<Int>(0)
        let due = CallWatchdog.shared.arm(Deadline(after: .milliseconds(10))) { fired.add(1, ordering: .relaxed) }
        let later = CallWatchdog.shared.arm(Deadline(after: .seconds(60))) { fired.add(100, ordering: .relaxed) }
        let deadline = Deadline(after: .seconds(5))
        while fired.load(ordering: .relaxed) == 0 && deadline.remainingMilliseconds > 0 { usleep(5_000) }
        #expect(CallWatchdog.shared.disarm(due))
        #expect(!CallWatchdog.shared.disarm(later))
        #expect(fired.load(ordering: .relaxed) == 1)
    }
}
