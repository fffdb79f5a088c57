// Kinds of text the development corpora do not cover: entities glued to CJK text, URL- and form-encoded values,
// mail headers, legal numbering, conference dial-ins, and passwords in prose, other languages and tool syntax.
// Each case is written for a rule, not for one sentence: several phrasings per rule, and their look-alikes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reported } from './fixtures/builtin-detector.ts';

/** Asserts that every expected `TYPE:value` is reported for its text. */
function expectFound(cases: readonly (readonly [string, ...string[]])[]): void {
  for (const [text, ...expected] of cases) {
    const got = reported(text);
    for (const e of expected)
      assert.ok(got.includes(e), `${JSON.stringify(text)}: expected ${e}, got ${got.join(' | ')}`);
  }
}

/** Asserts that nothing of `type` is reported for each text. */
function expectNone(type: string, texts: readonly string[]): void {
  for (const text of texts) {
    const got = reported(text).filter((d) => d.startsWith(`${type}:`));
    assert.deepEqual(got, [], `${JSON.stringify(text)}: unexpected ${got.join(' | ')}`);
  }
}

describe('entities glued to CJK text and full-width punctuation', () => {
  test('cards, including UnionPay (62, 16–19 digits), end where Japanese, Chinese or Korean text begins', () => {
    expectFound([
      ['お支払いはカード番号4686 3123 6065 5932でお願いします', 'CREDIT_CARD:4686 3123 6065 5932'],
      ['银联卡号6212346188001596726付款失败', 'CREDIT_CARD:6212346188001596726'],
      ['卡号：6250941006528599，有效期12/28', 'CREDIT_CARD:6250941006528599'],
      ['결제 카드는 5425233430109903입니다', 'CREDIT_CARD:5425233430109903'],
      ['「4111-1111-1111-1111」のカードは使えません', 'CREDIT_CARD:4111-1111-1111-1111'],
    ]);
  });

  test('e-mail local parts start after CJK letters and domains end before them', () => {
    expectFound([
      ['メールはnakamura_sota@docomo.ne.jpに送ってください', 'EMAIL:nakamura_sota@docomo.ne.jp'],
      ['请发邮件到wang.fang88@163.com或者打电话', 'EMAIL:wang.fang88@163.com'],
      ['이메일：minji.kim@naver.com，감사합니다', 'EMAIL:minji.kim@naver.com'],
      ['連絡先（tanaka@example.co.jp）まで', 'EMAIL:tanaka@example.co.jp'],
    ]);
  });

  test('keys and tokens glued to CJK text are found whole', () => {
    expectFound([
      ['キーASIAS4CP3GWBKYVS6DADが漏れました', 'AWS_ACCESS_KEY:ASIAS4CP3GWBKYVS6DAD'],
      [
        '密钥是sk-proj-Qw3rTy7uIoP1aS2dF4gH6jK8lZ0xC5vB9nM3T3BlbkFJq1W2e3R4t5Y6u7I8o9P0aS1dF2g，请尽快轮换',
        'OPENAI_API_KEY:sk-proj-Qw3rTy7uIoP1aS2dF4gH6jK8lZ0xC5vB9nM3T3BlbkFJq1W2e3R4t5Y6u7I8o9P0aS1dF2g',
      ],
      [
        'トークンはghp_7Hq2Lx9RkW3mZp5Vn8Tb1Yc4Fd6Gs0Je2Ku9が古い',
        'GITHUB_TOKEN:ghp_7Hq2Lx9RkW3mZp5Vn8Tb1Yc4Fd6Gs0Je2Ku9',
      ],
    ]);
  });

  test('phone numbers, IPs, IBANs and SSNs glued to CJK text', () => {
    expectFound([
      ['请致电139 4018 4283或发邮件', 'PHONE_NUMBER:139 4018 4283'],
      ['手机13940184283，微信同号', 'PHONE_NUMBER:13940184283'],
      ['携帯090-1234-5678までご連絡ください', 'PHONE_NUMBER:090-1234-5678'],
      ['연락처 010-2345-6789 입니다', 'PHONE_NUMBER:010-2345-6789'],
      ['サーバーIPは192.168.10.24です', 'IP_ADDRESS:192.168.10.24'],
      ['服务器地址：10.20.30.40，端口8080', 'IP_ADDRESS:10.20.30.40'],
      ['振込先口座はDE89370400440532013000です', 'IBAN:DE89370400440532013000'],
      ['SSNは123-45-6789です', 'US_SSN:123-45-6789'],
    ]);
  });

  test('passwords after CJK keywords, with particles, full-width colons and corner brackets', () => {
    expectFound([
      ['パスワード：Marble94', 'GENERIC_PASSWORD:Marble94'],
      ['Wi-Fiのパスワードは「Marble94」です', 'GENERIC_PASSWORD:Marble94'],
      ['密码是Abc12345，别告诉别人', 'GENERIC_PASSWORD:Abc12345'],
      ['登录密码：Xk9#mQ2v', 'GENERIC_PASSWORD:Xk9#mQ2v'],
      ['비밀번호는 Haneul2024!입니다', 'GENERIC_PASSWORD:Haneul2024!'],
      ['password：Kaze7Tori', 'GENERIC_PASSWORD:Kaze7Tori'],
      ['密码是123456，别告诉别人', 'GENERIC_PASSWORD:123456'],
      ['手机13940184283，密码是Zw123456!', 'PHONE_NUMBER:13940184283', 'GENERIC_PASSWORD:Zw123456!'],
    ]);
  });

  test('CJK look-alikes: password talk without a value, short numbers, order numbers', () => {
    expectNone('GENERIC_PASSWORD', [
      'パスワードを忘れました',
      'パスワードは8文字以上にしてください',
      '密码错误，请重试',
      '비밀번호를 변경해 주세요',
      '暗証番号は1234です',
      '密码有效期至20241231',
    ]);
    expectNone('IP_ADDRESS', ['バージョン10.2.30.4をインストールしました', '依据第3.1.2.4条款']);
    expectNone('PHONE_NUMBER', ['注文番号13940184283の件です', '订单号13940184283已发货']);
  });
});

describe('mail headers: message and part ids are not e-mail addresses', () => {
  test('Message-ID, In-Reply-To, References (folded), Content-ID, cid: and id keys', () => {
    const headers = [
      'From: Jane Doe <jane.doe@example.com>',
      'To: ops@harbor.example, "Lee" <lee@example.org>',
      'Reply-To: support@example.net',
      'Message-ID: <qvsEzdk8Uu343102@mail.gmail.com>',
      'In-Reply-To: <CAF=x2Yq+kW@mail.gmail.com>',
      'References: <20240101.abc@mx.example.com>',
      ' <20240102.def@mx.example.com> <A1B2@smtp.example.com>',
      'Content-ID: <part1.0609@example.com>',
      'Resent-Message-Id: <r8@relay.example.com>',
      '',
      '<img src="cid:logo.7f3a@corp.example.com">',
    ].join('\n');
    const emails = reported(headers).filter((d) => d.startsWith('EMAIL:'));
    assert.deepEqual(emails, [
      'EMAIL:jane.doe@example.com',
      'EMAIL:ops@harbor.example',
      'EMAIL:lee@example.org',
      'EMAIL:support@example.net',
    ]);
    expectNone('EMAIL', [
      '{"message_id": "<9f2c.1717@mailer.example.com>", "status": "sent"}',
      'msgid=<a7b8c9@smtp.example.org> delivered',
      '{"event":"delivered","smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555.example.net>"}',
      'X-Original-Message-ID: <orig-77@list.example.com>',
      'the message id <abc.123@mail.example.com> bounced twice',
    ]);
    expectFound([['{"from": "<anna@example.com>", "message_id": "<x@y.example.com>"}', 'EMAIL:anna@example.com']]);
  });
});

describe('dotted numbering is not an IPv4 address', () => {
  test('legal sections, clauses, articles, § and numbered outlines', () => {
    expectNone('IP_ADDRESS', [
      'Fees are set out in Section 18.4.9.4 Fees.',
      'Termination is governed by under Section 13.9.5.2.',
      'See § 4.2.1.3 and clause 3.1.2.4 for the details.',
      'as required by Article 5.1.2.1 of the agreement',
      'gemäß Abschnitt 7.2.1.4 der AGB',
      '12.4.1.3 Termination\nEither party may terminate.',
      '## 4.2.1.3. Scope of Work',
      'as described in 18.4.9.4 and 18.4.9.5 of the MSA',
    ]);
  });

  test('build and CI talk about version-like values', () => {
    expectNone('IP_ADDRESS', ['CI green on 8.9.76.86, shipping tonight.', 'nightly 4.12.30.7 failed two tests']);
  });

  test('real addresses next to address words are still reported', () => {
    expectFound([
      ['The server address is 18.4.9.4 and the host 13.9.5.2 is up.', 'IP_ADDRESS:18.4.9.4', 'IP_ADDRESS:13.9.5.2'],
      ['deploy target host 8.9.76.86 (prod)', 'IP_ADDRESS:8.9.76.86'],
      ['10.0.0.1 Gateway\n10.0.0.2 Printer', 'IP_ADDRESS:10.0.0.1'],
      ['Section 3 covers the VPN; connect from 192.168.14.7', 'IP_ADDRESS:192.168.14.7'],
      ['ping 18.4.9.4 and 17.5.3.2 from the bastion', 'IP_ADDRESS:18.4.9.4'],
      ['10.1.2.3 is down', 'IP_ADDRESS:10.1.2.3'],
    ]);
  });
});

describe('numbers near phone numbers that are not phone numbers', () => {
  test('conference PINs and passcodes after the dial-in number', () => {
    const cases: [string, string][] = [
      ['Join by phone: dial-in +1 (615) 826-9431 PIN 323 316 129#', '+1 (615) 826-9431'],
      ['Dial +1 615 826 9431 323 316 129# to join', '+1 615 826 9431'],
      ['Dial (615) 826-9431 323 316 129# to join', '(615) 826-9431'],
      ['One tap mobile: +16158269431,,323316129# US', '+16158269431'],
      ['Call 212-555-0187, conference PIN: 482 193 770', '212-555-0187'],
      ['Bridge: +44 20 7946 0958, passcode 123 456', '+44 20 7946 0958'],
    ];
    for (const [text, phone] of cases) {
      assert.deepEqual(
        reported(text).filter((d) => d.startsWith('PHONE_NUMBER:')),
        [`PHONE_NUMBER:${phone}`],
        text,
      );
    }
  });

  test('provider and tax ids on a fax line', () => {
    const text = 'Tel: (212) 555-0100  Fax: (212) 555-0187  NPI: 1234567893  EIN 12-3456789  routing 021000021';
    assert.deepEqual(
      reported(text).filter((d) => d.startsWith('PHONE_NUMBER:')),
      ['PHONE_NUMBER:(212) 555-0100', 'PHONE_NUMBER:(212) 555-0187'],
    );
    expectNone('PHONE_NUMBER', ['PIN 615 826 9431', 'Meeting ID: 812 3349 0123 Passcode: 482913']);
    expectNone('US_SSN', ['EIN 123456789, Fax (212) 555-0187', 'DUNS: 123456789 | NPI: 1234567893']);
  });
});

describe('URL- and form-encoded values', () => {
  test('entities in query strings, form bodies and HTTP logs are reported with their encoded span', () => {
    expectFound([
      [
        'POST /signup body: email=jane.doe%40example.com&phone=%2B33182066578&mobile=%2B39+051+1468442',
        'EMAIL:jane.doe%40example.com',
        'PHONE_NUMBER:%2B33182066578',
        'PHONE_NUMBER:%2B39+051+1468442',
      ],
      ['receipt_email=h.schmidt%2Bnews%40tidepool.dev&amount=2000', 'EMAIL:h.schmidt%2Bnews%40tidepool.dev'],
      [
        'GET /api/users?email=maria.garcia%40gmail.com&card=4111%201111%201111%201111 HTTP/1.1',
        'EMAIL:maria.garcia%40gmail.com',
        'CREDIT_CARD:4111%201111%201111%201111',
      ],
      ['q=call%20me%20at%20%2B1%20415%20555%202671%20tomorrow', 'PHONE_NUMBER:%2B1%20415%20555%202671'],
      ['phone=415+555+2671&name=Jo+Smith', 'PHONE_NUMBER:415+555+2671'],
      ['iban=DE89+3704+0044+0532+0130+00&name=Jane+Doe', 'IBAN:DE89+3704+0044+0532+0130+00'],
      ['checkout?card=4111+1111+1111+1111&exp=12%2F27', 'CREDIT_CARD:4111+1111+1111+1111'],
      ['email=jane+tag@example.com&x=1', 'EMAIL:jane+tag@example.com'],
      [
        '{"body":"first=Ana&contact_email=ana.souza%40uol.com.br&tel=%2B55%2011%2091234-5678"}',
        'EMAIL:ana.souza%40uol.com.br',
        'PHONE_NUMBER:%2B55%2011%2091234-5678',
      ],
      [
        '"POST /login?user=ops%40acme.io&password=Hunter2%21x HTTP/1.1" 302',
        'EMAIL:ops%40acme.io',
        'GENERIC_PASSWORD:Hunter2%21x',
      ],
      [
        'name=J%C3%BCrgen%20M%C3%BCller&iban=DE89%203704%200044%200532%200130%2000',
        'IBAN:DE89%203704%200044%200532%200130%2000',
      ],
    ]);
  });

  test('encoded text without entities reports nothing', () => {
    for (const text of [
      '/search/c++%20tips?lang=en',
      'utm_source=newsletter%202024&utm_campaign=spring%20sale&ref=ORD-2024-00042',
      'printf("%08x %20s", v, name); 100% done',
      'path=%2Fvar%2Flog%2Fapp.log&level=%5Bwarn%5D',
    ]) {
      assert.deepEqual(reported(text), [], text);
    }
  });
});

describe('passwords in prose, in other languages and in tool syntax', () => {
  test('prose: the value only, after "pw", "password is", "set … password to", "my password"', () => {
    expectFound([
      ['pw for the router is Tr0ub4dor&3 fyi', 'GENERIC_PASSWORD:Tr0ub4dor&3'],
      ['the password is Marble94', 'GENERIC_PASSWORD:Marble94'],
      ['can you set the guest wifi password to sunflower-Rain-42 please', 'GENERIC_PASSWORD:sunflower-Rain-42'],
      ['my password Kestrel!88 stopped working', 'GENERIC_PASSWORD:Kestrel!88'],
      ['pw Kestrel!88', 'GENERIC_PASSWORD:Kestrel!88'],
      ['Thanks for the help yesterday. password: Quokka#2041', 'GENERIC_PASSWORD:Quokka#2041'],
      ['The wifi name is CoffeeHouse and the password is latte2024', 'GENERIC_PASSWORD:latte2024'],
      ['my password was changed to sunshine99 yesterday', 'GENERIC_PASSWORD:sunshine99'],
      ['Das Passwort lautet katze2023', 'GENERIC_PASSWORD:katze2023'],
      ['the password for the guest network is coffee4all ok', 'GENERIC_PASSWORD:coffee4all'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'the password is case-sensitive',
      'the password is Incorrect',
      'Password is 8chars min',
      'your password is required.',
      'Passwords are stored as bcrypt hashes',
      'the password is v1.2.3',
      'your password is about to expire in 3days',
      'Password for the account is too weak',
    ]);
  });

  test('credential pairs after a login or account word', () => {
    expectFound([
      ['airbnb login jane@example.org / Plasma1994', 'EMAIL:jane@example.org', 'GENERIC_PASSWORD:Plasma1994'],
      ['test account qa.user@acme.io / F4lc0n#0 for staging', 'EMAIL:qa.user@acme.io', 'GENERIC_PASSWORD:F4lc0n#0'],
      ['the shared login is ops@acme.io / Pass2024! until friday', 'GENERIC_PASSWORD:Pass2024!'],
      ['creds: deploy / Tr0ub4dor&3', 'GENERIC_PASSWORD:Tr0ub4dor&3'],
      ['email/password: jane@example.org / Plasma1994', 'EMAIL:jane@example.org', 'GENERIC_PASSWORD:Plasma1994'],
      ['password: jane@example.org', 'EMAIL:jane@example.org'],
      ['Zugangsdaten: max.muster@firma.de / Herbst!2023', 'GENERIC_PASSWORD:Herbst!2023'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'email jane@example.org / Marketing2024',
      'contact jane@example.org / +1 415 555 2671',
      'login page / Dashboard2 layout',
      'account 4471 / Premium2024 tier',
      'Login / Sign up',
    ]);
  });

  test('other languages', () => {
    expectFound([
      ['Das Passwort ist Sommer2024! und das Kennwort lautet Winter#77', 'GENERIC_PASSWORD:Winter#77'],
      ['Le mot de passe est Soleil#2023 pour le wifi', 'GENERIC_PASSWORD:Soleil#2023'],
      ['la contraseña es Playa#2024', 'GENERIC_PASSWORD:Playa#2024'],
      ['A senha é Praia@2024', 'GENERIC_PASSWORD:Praia@2024'],
      ['het wachtwoord is Fiets!987', 'GENERIC_PASSWORD:Fiets!987'],
      ['Moje hasło to Zamek#2024', 'GENERIC_PASSWORD:Zamek#2024'],
      ['mitt lösenord är Sommar!55', 'GENERIC_PASSWORD:Sommar!55'],
      ['salasana on Kesä2024!x', 'GENERIC_PASSWORD:Kesä2024!x'],
      ['la password del DB di staging è Vesuvio!77', 'GENERIC_PASSWORD:Vesuvio!77'],
      ['пароль: Zima2024!', 'GENERIC_PASSWORD:Zima2024!'],
      ['Пароль от личного кабинета: Ivan#2024, спасибо', 'GENERIC_PASSWORD:Ivan#2024'],
      ['รหัสผ่านคือ Abc12345', 'GENERIC_PASSWORD:Abc12345'],
      ['şifre: Istanbul34!', 'GENERIC_PASSWORD:Istanbul34!'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'Kennwort vergessen? Klicken Sie hier.',
      'Das Passwort muss mindestens 12 Zeichen lang sein.',
      'clave de acceso incorrecta, inténtalo de nuevo',
    ]);
  });

  test('tool syntax: .pgpass, PowerShell, net user, password on stdin, mysql', () => {
    expectFound([
      ['*:5432:analytics:report_user:Rp9!xk2LmQ', 'GENERIC_PASSWORD:Rp9!xk2LmQ'],
      ['db.internal:5432:billing:billing_app:S3cure#Pgpass\n', 'GENERIC_PASSWORD:S3cure#Pgpass'],
      [
        'Set-AWSCredential -AccessKey AKIAZ3MHQ7RV5TXWLN2P -SecretKey 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 -StoreAs prod',
        'AWS_ACCESS_KEY:AKIAZ3MHQ7RV5TXWLN2P',
        'GENERIC_PASSWORD:k9Xv2LmQ8rT4wZ7yB1nC5dF3gH6jK0pS2uV4xY8z',
      ],
      ['Connect-Thing -User admin -Password Hunter2Hunter2!', 'GENERIC_PASSWORD:Hunter2Hunter2!'],
      ['mysql -u root --password Sup3rS3cret! -h db', 'GENERIC_PASSWORD:Sup3rS3cret!'],
      ["mysql -uroot -p'Sup3r$ecret' app", 'GENERIC_PASSWORD:Sup3r$ecret'],
      ['mysqldump -u backup -pB4ckup#Night shop > shop.sql', 'GENERIC_PASSWORD:B4ckup#Night'],
      ['$pw = ConvertTo-SecureString "Winter2024!Pw" -AsPlainText -Force', 'GENERIC_PASSWORD:Winter2024!Pw'],
      ['$s = ConvertTo-SecureString -String "Tr1dent!Blue" -AsPlainText -Force', 'GENERIC_PASSWORD:Tr1dent!Blue'],
      ['net user svc_backup B4ckup!2024 /add', 'GENERIC_PASSWORD:B4ckup!2024'],
      [
        'echo "gh0stRider99!" | docker login registry.example.com -u deploy --password-stdin',
        'GENERIC_PASSWORD:gh0stRider99!',
      ],
      ["echo 'ops:Rotat3d!Key' | sudo chpasswd", 'GENERIC_PASSWORD:Rotat3d!Key'],
      ["redis-cli -h cache.internal -a 'R3dis!Auth' ping", 'GENERIC_PASSWORD:R3dis!Auth'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'net user jdoe /domain',
      'net user svc_backup * /add',
      'echo "hello world" | grep hello',
      'echo $PASSWORD | docker login -u ci --password-stdin',
      'mysql -u root -p -h db.internal',
      'tar -a -cf backup.tar.gz data',
      'mysql -u root -p$MYSQL_ROOT_PASSWORD',
      '2024:01:15:10:30 job finished',
      'Get-Credential -UserName admin -Message "Enter your password"',
    ]);
  });

  test('a question about a password answered on the next line, and password columns of tables', () => {
    expectFound([
      ["A: what's the wifi password?\nB: BlueOcean42!", 'GENERIC_PASSWORD:BlueOcean42!'],
      [
        "[10:02] jane: hey what's the password for the staging db?\n[10:03] mark: St4ging#Db",
        'GENERIC_PASSWORD:St4ging#Db',
      ],
      ['username\tpassword\trole\nadmin\tAdm1n!Pass\towner', 'GENERIC_PASSWORD:Adm1n!Pass'],
      [
        'name,email,password\nAnn,ann@example.com,Ann#2024pw\nBob,bob@example.com,B0b!secret',
        'GENERIC_PASSWORD:Ann#2024pw',
        'GENERIC_PASSWORD:B0b!secret',
      ],
      ['| user | password |\n|------|----------|\n| ops  | 0ps#Team9 |', 'GENERIC_PASSWORD:0ps#Team9'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'what is the password?\nI have no idea',
      'Do you remember the router password?\nnope, sorry',
      'id;password;note\n1;changeme;default',
      'The password, as discussed, is below.\nnext line',
      'ansible_become_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n          6231336539666234',
    ]);
  });

  test('secrets named in a sentence with the value after a colon', () => {
    expectFound([
      ['Jira API token for the onboarding script: RWM9cZa12QOWeY', 'GENERIC_PASSWORD:RWM9cZa12QOWeY'],
      [
        'I pasted the service principal secret into the channel by mistake: hWjJ9NYZlMX~8Q',
        'GENERIC_PASSWORD:hWjJ9NYZlMX~8Q',
      ],
      ['here is the webhook signing key we use in prod: Qm7vT2xL9pRk4ZsW', 'GENERIC_PASSWORD:Qm7vT2xL9pRk4ZsW'],
      ['Der API-Token für das Skript: RWM9cZa12QOWeY', 'GENERIC_PASSWORD:RWM9cZa12QOWeY'],
    ]);
    expectNone('GENERIC_PASSWORD', [
      'The public key fingerprint is: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8',
      'The token expires at: 2024-06-01T10:00:00Z',
      'The secret: always test your backups.',
      'Use the next page token from the response: see the docs',
      'key findings: Revenue2024 grew in every region',
      'the key takeaway: Customers2024 prefer self-service',
      'sort key: created_at_2024',
    ]);
  });

  test('credentials without a type of their own are GENERIC_PASSWORD, value only', () => {
    expectFound([
      [
        'aws_secret_access_key = k9Xv2LmQ8rT4wZ7yB1nC5dF3gH6jK0pS2uV4xY8z',
        'GENERIC_PASSWORD:k9Xv2LmQ8rT4wZ7yB1nC5dF3gH6jK0pS2uV4xY8z',
      ],
      [
        'aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6k',
        'GENERIC_PASSWORD:IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6k',
      ],
      [
        '//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
        'GENERIC_PASSWORD:npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
      ],
      [
        '[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJGE0ZjE2YjQ5LTk1ZDUtNDc',
        'GENERIC_PASSWORD:pypi-AgEIcHlwaS5vcmcCJGE0ZjE2YjQ5LTk1ZDUtNDc',
      ],
      ['the runner uses glpat-xY7zK2mN9pQ4rS6tU8vW for the mirror', 'GENERIC_PASSWORD:glpat-xY7zK2mN9pQ4rS6tU8vW'],
      [
        'npm token: npm_Zq8Lw2Xr5Tm9Kp3Vn7Bc1Hd4Fg6Js0Ya2Ue8Io',
        'GENERIC_PASSWORD:npm_Zq8Lw2Xr5Tm9Kp3Vn7Bc1Hd4Fg6Js0Ya2Ue8Io',
      ],
      ['"client_secret": "GOCSPX-4fT9kLm2Qx8vRz1Yb7Nc"', 'GENERIC_PASSWORD:GOCSPX-4fT9kLm2Qx8vRz1Yb7Nc'],
      [
        '{"auths": {"https://index.docker.io/v1/": {"auth": "ZGVwbG95OnM0eXJBbjRkMG0hUGFzcw=="}}}',
        'GENERIC_PASSWORD:ZGVwbG95OnM0eXJBbjRkMG0hUGFzcw==',
      ],
    ]);
  });

  test('placeholders, hashes, public keys and instructions stay out', () => {
    expectNone('GENERIC_PASSWORD', [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template
      'password: ${{ secrets.DB_PASSWORD }}',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'the password is ***',
      'set password to <password> and restart',
      'password=changeme',
      'API_TOKEN=REPLACE_ME',
      'my password hash is $2b$12$KIXQ3q9vWJ7n5x8Yb3m1OeZp0aR2sT4uV6wX8yZ0aB2cD4eF6gH8i',
      'password_hash: $argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG',
      'hash: $P$BtV2Gx6oO3c8s5yN7hQ1wZ0aR4kL9m2',
      'Please reset your password by clicking the link below.',
      'Your password must be 12 characters long and include a symbol.',
      'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA+3jX2mW9fLkNq8tZpE4sRvH1yU6cGbIoP0aK5dJ3 deploy@ci',
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA7vbqajDhA+3jX2mW9fLkNq8tZpE4sRvH1yU6\n-----END PUBLIC KEY-----',
      'glpat-xxxxxxxxxxxxxxxxxxxx',
      'apiKey: process.env.OPENAI_API_KEY',
    ]);
    expectNone('AWS_ACCESS_KEY', ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE']);
  });
});
