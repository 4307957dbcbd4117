export { createJwtVerifier, signJwt, type JwtVerifier, type JwtClaims, type JwtSettings } from './jwt.js';
export { createAuthenticator } from './authenticator.js';
