package io.github.electionpolicy.springboot;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@code election.enabled}, read as {@link ElectionProperties#enabled()} is bound: whatever Spring converts to
 * a boolean ({@code true}/{@code on}/{@code yes}/{@code 1}, {@code false}/{@code off}/{@code no}/{@code 0}, in
 * any case), unset or empty for the default, on. Anything else fails the start-up with Spring Boot's report
 * naming the property. {@code @ConditionalOnBooleanProperty} matched only the text {@code true}, so
 * {@code on}, {@code yes}, {@code 1} or a typo turned the election off without a word, and with it every
 * {@code LeaderService}. Stateless; thread-safe.
 */
final class OnElectionEnabledCondition extends SpringBootCondition {

  static final String PROPERTY = ElectionProperties.PREFIX + ".enabled";

  @Override
  public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
    ConditionMessage.Builder message = ConditionMessage.forCondition("election enabled");
    boolean enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Boolean.class).orElse(true);
    return enabled
        ? ConditionOutcome.match(message.because(PROPERTY + " is true or unset"))
        : ConditionOutcome.noMatch(message.because(PROPERTY + " is false"));
  }
}
