// Plain JavaScript subclasses: no compiler stands between them and the base-class check.
module.exports = function defineSubclasses(Authenticator, SecurityScheme, SecurityContext) {
  const scheme = new SecurityScheme({ authType: 'apiKey' });

  class Complete extends Authenticator {
    get securityScheme() {
      return scheme;
    }
    async authenticate(credentials) {
      return new SecurityContext({ principalId: credentials, token: credentials });
    }
    async refreshToken(context) {
      return context;
    }
  }
  class NoScheme extends Authenticator {
    async authenticate() {}
    async refreshToken(context) {
      return context;
    }
  }
  class NoAuthenticate extends Authenticator {
    get securityScheme() {
      return scheme;
    }
    async refreshToken(context) {
      return context;
    }
  }
  class NoRefresh extends Authenticator {
    get securityScheme() {
      return scheme;
    }
    async authenticate() {}
  }
  class NothingAtAll extends Authenticator {}
  class AuthenticateNotAFunction extends Authenticator {
    get securityScheme() {
      return scheme;
    }
    async refreshToken(context) {
      return context;
    }
  }
  AuthenticateNotAFunction.prototype.authenticate = 'nope';
  // Inherits everything from a complete parent: allowed.
  class Grandchild extends Complete {}
  // A function-style subclass built with Reflect.construct.
  function Legacy() {
    return Reflect.construct(Authenticator, [], Legacy);
  }
  Object.setPrototypeOf(Legacy.prototype, Authenticator.prototype);
  Legacy.prototype.authenticate = async () => undefined;

  return {
    Complete,
    NoScheme,
    NoAuthenticate,
    NoRefresh,
    NothingAtAll,
    AuthenticateNotAFunction,
    Grandchild,
    Legacy,
  };
};
