package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongFunction;
import java.util.stream.Collectors;

/**
 * The vocabulary of {@code ShardCoordinatorStepTest}: named phases (each reached from a new coordinator, identity
 * {@code a}, 4 shards, a settle time of 100, by a list of inputs at given times), named inputs, and a one-line
 * rendering of commands, phases and runners, so that a row reads as "in this phase, this input leads to these
 * commands, that phase and these runners". Views are written as {@link ShardView#of} writes them: the live members'
 * letters, then one character per shard (a holder's letter, {@code -} free).
 */
final class ShardCoordinatorTable {

  static final String SELF = "a";
  static final int SHARDS = 4;
  static final long SETTLE = 100;
  /** How long at most a leaver stays for other leavers: past it at "tick, settled", not at the other inputs. */
  static final long LINGER = 500;
  /** When the table's inputs happen: after every setup's inputs, before the settle time has passed since. */
  static final long NOW = 300;
  /** When "tick, settled" happens: long after every setup's last membership change. */
  static final long SETTLED = 1_000;

  /** The inputs, by name, at a given time. */
  static final Map<String, LongFunction<ShardCoordinatorInput>> INPUTS = new LinkedHashMap<>();

  static {
    INPUTS.put("start", ShardCoordinatorInput.Start::new);
    INPUTS.put("view ab ----", now -> view("ab", "----", now));
    INPUTS.put("view ab abab", now -> view("ab", "abab", now));
    INPUTS.put("view ab bbbb", now -> view("ab", "bbbb", now));
    INPUTS.put("view ab aaaa", now -> view("ab", "aaaa", now));
    INPUTS.put("view a ----", now -> view("a", "----", now));
    INPUTS.put("view a aaaa", now -> view("a", "aaaa", now));
    INPUTS.put("view abc ----", now -> view("abc", "----", now));
    // b's membership Lease not seen to change since it was first seen (it may be a member's long gone).
    INPUTS.put("view ab aaaa, b unconfirmed", now -> unconfirmed("ab", "aaaa", java.util.Set.of(), now));
    // Views that show leaving marks (the members after "marked"), and a version of each live member's Lease.
    INPUTS.put("view b ---- a marked", now -> marked("b", "----", "a", now));
    INPUTS.put("view c -b-- ab marked", now -> marked("c", "-b--", "ab", now));
    // Shard 1 handed over to a (a term written for a by its previous owner, not renewed since).
    INPUTS.put("view b -a-- a marked, 1 to a", now -> marked("b", "-a--", "a", java.util.Set.of(1), now));
    INPUTS.put("held", ShardCoordinatorInput.MembershipHeld::new);
    INPUTS.put("lost", ShardCoordinatorInput.MembershipLost::new);
    INPUTS.put("released", ShardCoordinatorInput.MembershipReleased::new);
    INPUTS.put("contending 0", now -> new ShardCoordinatorInput.ShardContending(0, now));
    INPUTS.put("owned 0", now -> new ShardCoordinatorInput.ShardOwned(0, 7, now));
    INPUTS.put("stopped 0", now -> new ShardCoordinatorInput.ShardStopped(0, true, now));
    INPUTS.put("stopped 0 unreleased", now -> new ShardCoordinatorInput.ShardStopped(0, false, now));
    INPUTS.put("close", ShardCoordinatorInput.CloseRequested::new);
    INPUTS.put("tick", ShardCoordinatorInput.Tick::new);
    INPUTS.put("tick, settled", ShardCoordinatorInput.Tick::new);
  }

  static ShardCoordinatorInput.ViewObserved view(String live, String owners, long now) {
    ShardView view = ShardView.of(live, owners);
    return new ShardCoordinatorInput.ViewObserved(new java.util.TreeSet<>(view.live()), view.owners(), now);
  }

  static ShardCoordinatorInput.ViewObserved unconfirmed(String live, String owners, java.util.Set<Integer> handOvers,
      long now) {
    ShardView view = ShardView.of(live, owners);
    java.util.Map<String, String> versions = new java.util.TreeMap<>();
    view.live().forEach(member -> versions.put(member, "v-" + member));
    return new ShardCoordinatorInput.ViewObserved(new java.util.TreeSet<>(view.live()), view.owners(), versions,
        handOvers, java.util.Set.of(), java.util.Set.of("b"), now);
  }

  static ShardCoordinatorInput.ViewObserved marked(String live, String owners, String leaving, long now) {
    return marked(live, owners, leaving, java.util.Set.of(), now);
  }

  static ShardCoordinatorInput.ViewObserved marked(String live, String owners, String leaving,
      java.util.Set<Integer> handOvers, long now) {
    ShardView view = ShardView.of(live, owners);
    java.util.Map<String, String> versions = new java.util.TreeMap<>();
    view.live().forEach(member -> versions.put(member, "v-" + member));
    return new ShardCoordinatorInput.ViewObserved(new java.util.TreeSet<>(view.live()), view.owners(), versions,
        handOvers, new java.util.TreeSet<>(ShardView.of(leaving, "").live()), now);
  }

  /** A setup's input: a name of {@link #INPUTS} and when it happens. */
  record At(String input, long now) {}

  static final Map<String, List<At>> SETUPS = new LinkedHashMap<>();

  static {
    setup("created");
    setup("joining", "start@0");
    setup("joining, viewed", "start@0", "view ab ----@1");
    setup("member, no view", "start@0", "held@1");
    // From the view "ab ----", a's plan takes shards 0 and 2 (ShardPlannerStepTest pins that split).
    setup("member, contending 0 2", "start@0", "view ab ----@0", "held@0");
    setup("member, owning 0, contending 2", "start@0", "view ab ----@0", "held@0", "owned 0@1");
    setup("member, fair", "start@0", "view ab ----@0", "held@0", "owned 0@1", "owned 2@1", "view ab abab@2");
    setup("member alone, owning all", "start@0", "view a ----@0", "held@0", "owned 0@1", "owned 1@1", "owned 2@1",
        "owned 3@1", "view a aaaa@1");
    // b joins at 250: a's surplus waits until 350 (the table's inputs come at 300).
    setup("member, surplus unsettled", "start@0", "view a ----@0", "held@0", "owned 0@1", "owned 1@1", "owned 2@1",
        "owned 3@1", "view a aaaa@1", "view ab aaaa@250");
    // b's Lease was first seen at 5 and never seen to change since: though the live set is settled, a keeps its surplus.
    setup("member, surplus, b unconfirmed", "start@0", "view a ----@0", "held@0", "owned 0@1", "owned 1@1", "owned 2@1",
        "owned 3@1", "view a aaaa@1", "view ab aaaa, b unconfirmed@5");
    setup("member, handing over", "start@0", "view a ----@0", "held@0", "owned 0@1", "owned 1@1", "owned 2@1",
        "owned 3@1", "view a aaaa@1", "view ab aaaa@5", "tick@200");
    setup("lapsed", "start@0", "view ab ----@0", "held@0", "owned 0@1", "lost@2");
    setup("leaving", "start@0", "view ab ----@0", "held@0", "owned 0@1", "close@2");
    // Its view shows b leaving too, still holding shard 1: a stays (until LINGER after its close) to decline.
    setup("leaving, lingering", "start@0", "view ab ----@0", "held@0", "owned 0@1", "close@2",
        "view c -b-- ab marked@2", "stopped 0@3", "stopped 2@3");
    setup("releasing", "start@0", "view ab ----@0", "held@0", "owned 0@1", "close@2", "view b ---- a marked@2",
        "stopped 0@3", "stopped 2@3");
    setup("leaving, abandoned", "start@0", "view ab ----@0", "held@0", "owned 2@1", "stopped 0 unreleased@2");
    setup("stopped", "start@0", "close@1", "released@2");
  }

  private static void setup(String name, String... inputs) {
    List<At> steps = new ArrayList<>();
    for (String input : inputs) {
      int at = input.lastIndexOf('@');
      steps.add(new At(input.substring(0, at), Long.parseLong(input.substring(at + 1))));
    }
    SETUPS.put(name, steps);
  }

  static ShardCoordinator reach(String setupName) {
    return reach(setupName, ShardCoordinator.Flaw.NONE);
  }

  static ShardCoordinator reach(String setupName, ShardCoordinator.Flaw flaw) {
    List<At> steps = SETUPS.get(setupName);
    if (steps == null) {
      throw new IllegalArgumentException("no setup named " + setupName);
    }
    ShardCoordinator coordinator = new ShardCoordinator(SELF, SHARDS, SETTLE, LINGER, ShardPlanner.FAIR, flaw);
    for (At step : steps) {
      coordinator.step(input(step.input(), step.now()));
    }
    return coordinator;
  }

  static ShardCoordinatorInput input(String name, long now) {
    if (name.startsWith("owned ") || name.startsWith("stopped ")) {
      String[] words = name.split(" ");
      int shard = Integer.parseInt(words[1]);
      return name.startsWith("owned ") ? new ShardCoordinatorInput.ShardOwned(shard, 3 + shard, now)
          : new ShardCoordinatorInput.ShardStopped(shard, words.length == 2, now);
    }
    LongFunction<ShardCoordinatorInput> input = INPUTS.get(name);
    if (input == null) {
      throw new IllegalArgumentException("no input named " + name);
    }
    return input.apply(now);
  }

  /** One row's outcome: the commands, then the phase and the runners after. */
  static String outcome(String setupName, String inputName) {
    return outcome(setupName, inputName, ShardCoordinator.Flaw.NONE);
  }

  static String outcome(String setupName, String inputName, ShardCoordinator.Flaw flaw) {
    ShardCoordinator coordinator = reach(setupName, flaw);
    String commands;
    try {
      commands = coordinator.step(input(inputName, inputName.equals("tick, settled") ? SETTLED : NOW)).stream()
          .map(ShardCoordinatorTable::render).collect(Collectors.joining("; "));
    } catch (RuntimeException e) {
      return "throws " + e.getClass().getSimpleName();
    }
    return (commands.isEmpty() ? "-" : commands) + " => " + render(coordinator.phase()) + ", "
        + render(coordinator.runners());
  }

  static String render(ShardCoordinatorCommand command) {
    if (command instanceof ShardCoordinatorCommand.Join) {
      return "join";
    } else if (command instanceof ShardCoordinatorCommand.Contend contend) {
      return "contend " + contend.shard();
    } else if (command instanceof ShardCoordinatorCommand.HandOver handOver) {
      return "hand over " + handOver.shard() + " " + handOver.why().name().toLowerCase(Locale.ROOT);
    } else if (command instanceof ShardCoordinatorCommand.Decline decline) {
      return "decline " + decline.shard();
    } else if (command instanceof ShardCoordinatorCommand.Name name) {
      return "name " + name.shard() + " " + name.successor().identity() + "@" + name.successor().membershipVersion();
    } else if (command instanceof ShardCoordinatorCommand.MarkSeen) {
      return "mark seen";
    } else if (command instanceof ShardCoordinatorCommand.AnnounceLeaving) {
      return "announce leaving";
    } else if (command instanceof ShardCoordinatorCommand.Leave) {
      return "leave";
    } else if (command instanceof ShardCoordinatorCommand.ReportStopped stopped) {
      return "report stopped " + stopped.cause();
    }
    throw new IllegalArgumentException(command.toString());
  }

  static String render(ShardCoordinatorPhase phase) {
    if (phase instanceof ShardCoordinatorPhase.Leaving leaving) {
      return "Leaving(" + leaving.cause() + ")";
    } else if (phase instanceof ShardCoordinatorPhase.Releasing releasing) {
      return "Releasing(" + releasing.cause() + ")";
    } else if (phase instanceof ShardCoordinatorPhase.Stopped stopped) {
      return "Stopped(" + stopped.cause() + ")";
    }
    return phase.getClass().getSimpleName();
  }

  static String render(Map<Integer, ShardCoordinator.RunnerState> runners) {
    if (runners.isEmpty()) {
      return "no runners";
    }
    return runners.entrySet().stream()
        .map(runner -> runner.getKey() + ":" + runner.getValue().name().toLowerCase(Locale.ROOT))
        .collect(Collectors.joining(" "));
  }

  /** Prints the whole table, for writing the test's rows; run by hand. */
  public static void main(String[] args) {
    int width = SETUPS.keySet().stream().mapToInt(String::length).max().orElse(0);
    int inputWidth = INPUTS.keySet().stream().mapToInt(String::length).max().orElse(0);
    for (String setup : SETUPS.keySet()) {
      for (String input : INPUTS.keySet()) {
        System.out.println(String.format("%-" + width + "s | %-" + inputWidth + "s | %s", setup, input,
            outcome(setup, input)));
      }
      System.out.println();
    }
  }
}
