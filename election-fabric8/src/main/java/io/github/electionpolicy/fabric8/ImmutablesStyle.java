package io.github.electionpolicy.fabric8;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.immutables.value.Value;

/**
 * How Immutables generates this package's values: the generated {@code Immutable*} class is package-private
 * and hidden behind the abstract value type ({@code build()} returns the value type, the builder's setters
 * return the value type's nested {@code Builder}), and it uses the JDK only, so no Guava reaches the run-time
 * classpath, and no Immutables annotation that a user's compiler would look for. Accessors keep their names ({@code leaseName()}, not {@code getLeaseName()}): no {@code get}
 * prefix is stripped, so none can turn an accessor such as {@code issuer()} into an attribute {@code suer}.
 *
 * <p>Source retention: the style is read by the annotation processor and leaves no trace in the class files.
 */
@Target({ElementType.PACKAGE, ElementType.TYPE})
@Retention(RetentionPolicy.SOURCE)
@Value.Style(
    visibility = Value.Style.ImplementationVisibility.PACKAGE,
    // A package-private generated builder makes Javadoc document its setters as the public Builder's own,
    // instead of listing them as "inherited from ImmutableLeaseSettings.Builder".
    builderVisibility = Value.Style.BuilderVisibility.PACKAGE,
    overshadowImplementation = true,
    jdkOnly = true,
    // Only the JDK's source-retention @Generated: Immutables' own class-retention @Generated(from, generator)
    // would make every user's javac warn "Cannot find annotation method 'from()'", fatal under -Werror, because
    // value-annotations is not on their classpath (and need not be).
    allowedClasspathAnnotations = {javax.annotation.processing.Generated.class},
    // Withers on the hidden implementation would be unreachable API; toBuilder() is the public copy.
    defaults = @Value.Immutable(copy = false))
@interface ImmutablesStyle {}
