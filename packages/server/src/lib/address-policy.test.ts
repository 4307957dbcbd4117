import { describe, expect, it } from 'vitest';
import { judgeAddress } from './address-policy.js';

describe('address policy', () => {
  it('lets global unicast addresses through', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34']) {
      expect(judgeAddress(address, false), address).toEqual({ allowed: true });
    }
  });

  it('refuses special-purpose ranges, IPv4-mapped spellings included; allowing private ones keeps metadata refused', () => {
    const refused = ['127.0.0.1', '127.255.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '10.0.0.1', '172.31.255.255', '192.168.1.1',
      '169.254.0.1', 'fe80::1%eth0', 'fc00::1', 'fd00::1', '100.64.0.1', '100.127.255.255', '0.0.0.0', '::', '224.0.0.1', '255.255.255.255',
      '192.0.2.1', '198.51.100.1', '203.0.113.1', '2001:db8::1', '64:ff9b::a00:1', '2002:a00:1::1'];
    for (const address of refused) expect(judgeAddress(address, false).allowed, address).toBe(false);
    for (const address of ['127.0.0.1', '10.0.0.1', 'fd00::1', '::1']) expect(judgeAddress(address, true), address).toEqual({ allowed: true });
    for (const address of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192', '::ffff:169.254.169.254']) {
      expect(judgeAddress(address, true), address).toMatchObject({ allowed: false, reason: expect.stringContaining('metadata') });
    }
    expect(judgeAddress('not-an-ip', true).allowed).toBe(false);
  });
});
