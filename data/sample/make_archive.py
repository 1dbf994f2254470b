"""Build data/sample/archive.jsonl, the offline dated-document archive for the sample corpus.

The evaluation stage can search this archive instead of the web. For every sample question it
holds short news-style texts written for this project:

- ``background`` (τ − 21 days unless overridden) and ``preview`` (τ − 3 days): what was known
  before the outcome; they name no date after the prediction cutoff χ = τ − 1 day, so the date
  mask and the heuristic leak filter keep them;
- ``result`` (published on τ) and, for every other question, ``recap`` (τ + 10 days): the outcome,
  which the date mask must hide;
- ``stale`` (10 questions): dated τ − 2 days but carrying a later update with the outcome, the
  republication case the heuristic filter must catch from the text;
- ``undated`` (5 questions): no published_date (3 background-only, 2 with the outcome).

Each doc_id is ``<question id>-<kind>``. Run from the repository root after make_sample.py:
    PYTHONPATH=. python data/sample/make_archive.py
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent
OUT_PATH = SAMPLE_DIR / "archive.jsonl"
URL_ROOT = "https://archive.oracleproto.example"
CONTENT_CHARS = (300, 1200)
BACKGROUND_DAYS, PREVIEW_DAYS, RECAP_DAYS, STALE_DAYS = 21, 3, 10, 2
# Questions whose context only existed shortly before τ (a first round, a semi-final, a death).
BACKGROUND_DAYS_OVERRIDE = {
    "turkey-runoff": 10, "nba-2023": 12, "rwc-final-2023": 6, "euro-final-2024": 3, "sb-lix": 12,
    "conclave-second-day": 10, "pope-2025": 10, "poland-2025": 10, "ws-2025": 9, "sb-lx": 12,
}  # fmt: skip
PREVIEW_DAYS_OVERRIDE = {
    "starship-ift1": 2, "debt-limit": 4, "nobel-2023": 10, "cwc-final-2023": 2, "bjp-majority": 2,
    "euro-final-2024": 1, "nobel-2024": 10, "conclave-second-day": 2, "pope-2025": 2, "ao-2026": 4,
}  # fmt: skip
STALE_SLUGS = (
    "sb-lvii", "eurovision-2023", "fed-2023-07", "cwc-final-2023", "uk-2024",
    "us-pres-2024", "wcc-2024", "pope-2025", "ws-2025", "sb-lx",
)  # fmt: skip
UNDATED_BACKGROUND_SLUGS = ("boe-2023-09", "ecb-2024-06", "fed-2025-01")
UNDATED_OUTCOME_SLUGS = ("ballon-2023", "grammy-aoty-2025")
# The three ways a later update is dated in stale documents (all formats the heuristic reads).
STALE_DATE_FORMATS = ("%Y-%m-%d", "{day} %B %Y", "%B {day}, %Y")

# slug -> (topic, context known well before τ, outlook shortly before τ). No text names a date
# after its question's prediction cutoff, and none states the outcome.
FACTS: dict[str, tuple[str, str, str]] = {
    "sb-lvii": (
        "Super Bowl LVII",
        "The Kansas City Chiefs and the Philadelphia Eagles meet in Super Bowl LVII at State Farm Stadium in "
        "Glendale, Arizona. Both teams finished the regular season at 14-3 as the top seeds of their "
        "conferences, with Patrick Mahomes and Jalen Hurts leading the two offences.",
        "Betting markets make the Eagles slight favourites. The game is the first Super Bowl in which two "
        "Black starting quarterbacks face each other.",
    ),
    "oscars-bp-2023": (
        "Best Picture at the 95th Academy Awards",
        "Ten films are nominated for Best Picture at the 95th Academy Awards. Everything Everywhere All at "
        "Once leads the field with 11 nominations, followed by All Quiet on the Western Front and The "
        "Banshees of Inisherin with nine each.",
        "Everything Everywhere All at Once has won the top awards of the Producers Guild, the Directors Guild "
        "and the Screen Actors Guild, a combination that usually marks the Best Picture frontrunner. All "
        "Quiet on the Western Front won Best Film at the BAFTAs.",
    ),
    "gpt4": (
        "OpenAI's GPT-4",
        "OpenAI's ChatGPT, launched in November 2022, runs on models from the GPT-3.5 series. The company is "
        "known to be working on a successor, GPT-4, but has not given a release date, and chief executive "
        "Sam Altman has played down speculation about it.",
        "At an event in Germany, Microsoft Germany's chief technology officer Andreas Braun said that GPT-4 "
        "would be introduced the following week and would be multimodal.",
    ),
    "starship-ift1": (
        "SpaceX's first integrated Starship flight test",
        "SpaceX is preparing the first integrated flight test of its Starship system from Starbase in Boca "
        "Chica, Texas, pairing Super Heavy Booster 7 with Ship 24. The flight plan calls for the two stages "
        "to separate about three minutes after launch, with the ship continuing toward a splashdown near "
        "Hawaii.",
        "The Federal Aviation Administration has issued the launch licence. A first launch attempt was called "
        "off because of a frozen pressurisation valve on the booster. Elon Musk has said that reaching orbit "
        "is unlikely and that clearing the launch pad would count as a success.",
    ),
    "eurovision-2023": (
        "the Eurovision Song Contest 2023",
        "Liverpool hosts the Eurovision Song Contest 2023 on behalf of Ukraine, the 2022 winner, which cannot "
        "stage the event because of the war. Twenty-six countries compete in the grand final at the "
        "Liverpool Arena.",
        "Sweden's Loreen, who won the contest in 2012 with Euphoria, is the bookmakers' favourite with Tattoo. "
        "Finland's Käärijä, performing Cha Cha Cha, is seen as her main rival, particularly in the public vote.",
    ),
    "turkey-runoff": (
        "Turkey's presidential runoff",
        "No candidate won a majority in the first round of Turkey's presidential election on 14 May 2023. "
        "Incumbent Recep Tayyip Erdoğan took 49.5% of the vote and opposition candidate Kemal Kılıçdaroğlu "
        "44.9%, with Sinan Oğan third on 5.2%.",
        "Sinan Oğan has endorsed Erdoğan for the second round, while Ümit Özdağ's nationalist Victory Party "
        "has backed Kılıçdaroğlu. Erdoğan's People's Alliance also kept its majority in parliament in the "
        "first round.",
    ),
    "debt-limit": (
        "the US federal debt limit",
        "The United States reached its statutory debt limit of about $31.4 trillion in January 2023, and the "
        "Treasury has been using extraordinary measures to keep paying its bills. Treasury Secretary Janet "
        "Yellen has warned that those measures could be exhausted in early June.",
        "President Joe Biden and House Speaker Kevin McCarthy have reached an agreement in principle to "
        "suspend the debt limit and cap spending. The bill, the Fiscal Responsibility Act, still has to pass "
        "the House and the Senate before it can be signed.",
    ),
    "nba-2023": (
        "the 2023 NBA Finals",
        "The Denver Nuggets, top seed in the Western Conference, face the Miami Heat in the 2023 NBA Finals, "
        "the first Finals appearance in Denver's franchise history. Miami reached the Finals from the "
        "play-in tournament as the eighth seed in the East.",
        "Denver hold home advantage and are the bookmakers' favourites. Nikola Jokić, a two-time regular-season "
        "MVP, leads the Nuggets, while Jimmy Butler leads the Heat.",
    ),
    "spain-2023": (
        "Spain's general election",
        "Prime Minister Pedro Sánchez called a snap general election after his Socialist party (PSOE) lost "
        "ground in the local and regional elections of 28 May 2023. The 350 seats of the Congress of Deputies "
        "are at stake, and 176 are needed for a majority.",
        "Opinion polls put Alberto Núñez Feijóo's People's Party (PP) in first place, ahead of the PSOE, with "
        "the far-right Vox and the left-wing platform Sumar competing for third.",
    ),
    "barbie-opening": (
        "Barbie's opening weekend",
        "Warner Bros. releases Greta Gerwig's Barbie, starring Margot Robbie and Ryan Gosling, in North "
        "American cinemas on the same weekend as Christopher Nolan's Oppenheimer from Universal. The "
        "simultaneous release has become an online phenomenon nicknamed Barbenheimer.",
        "Pre-release tracking for Barbie has risen steadily over recent weeks, and advance ticket sales "
        "suggest it will be the larger of the two openings. Its production budget is reported at about "
        "$145 million.",
    ),
    "fed-2023-07": (
        "the FOMC's July 2023 meeting",
        "The Federal Reserve has raised the target range for the federal funds rate ten times since March "
        "2022, most recently to 5.00-5.25% in May 2023. In June the Committee paused, but its projections "
        "pointed to two more increases this year.",
        "Futures markets assign a high probability to a quarter-point increase at the July meeting. Consumer "
        "price inflation slowed to 3.0% year on year in June, the lowest rate since March 2021.",
    ),
    "wwc-sf-2023": (
        "the 2023 FIFA Women's World Cup",
        "Australia and New Zealand co-host the 2023 FIFA Women's World Cup, the first edition with 32 teams. "
        "The United States arrive as two-time defending champions and England as European champions.",
        "The quarter-final line-up is set: Spain play the Netherlands and Japan meet Sweden, while co-hosts "
        "Australia face France and England play Colombia. Sweden knocked out the United States on penalties "
        "in the round of 16.",
    ),
    "chandrayaan-3": (
        "India's Chandrayaan-3 mission",
        "India's space agency ISRO launched Chandrayaan-3 on an LVM3 rocket from Sriharikota in July 2023. The "
        "mission carries the Vikram lander and the Pragyan rover and aims for a landing near the Moon's south "
        "pole, four years after the Chandrayaan-2 lander crashed.",
        "The Vikram lander has separated from the propulsion module and has been lowering its orbit. Russia's "
        "Luna 25, which was aiming for the same region, crashed after a failed manoeuvre.",
    ),
    "boe-2023-09": (
        "the Bank of England's September 2023 rate decision",
        "The Bank of England has raised Bank Rate 14 times in a row since December 2021, most recently by a "
        "quarter point to 5.25% in August 2023. UK consumer price inflation was 6.8% in July, far above the "
        "2% target.",
        "Economists are divided over whether the Monetary Policy Committee will raise rates again or pause, "
        "and several members have signalled that rates may be close to their peak.",
    ),
    "nobel-2023": (
        "the 2023 Nobel Prizes",
        "The Nobel Prizes in physiology or medicine, physics, chemistry, literature and peace, and the "
        "Sveriges Riksbank Prize in economic sciences, are announced in Stockholm and Oslo over about a week "
        "in early October. Nominations are kept secret for fifty years.",
        "Names often mentioned by commentators include mRNA vaccine pioneers Katalin Karikó and Drew Weissman "
        "for medicine, and writers such as Can Xue, Haruki Murakami and Salman Rushdie for literature.",
    ),
    "rwc-sf-2023": (
        "the 2023 Rugby World Cup",
        "France hosts the 2023 Rugby World Cup, with twenty teams in four pools. Ireland enter the tournament "
        "ranked first in the world, the hosts France are also among the favourites, and South Africa are the "
        "defending champions.",
        "The quarter-final line-up is set: Wales play Argentina and Ireland meet New Zealand, while England "
        "face Fiji and France play the defending champions South Africa.",
    ),
    "rwc-final-2023": (
        "the 2023 Rugby World Cup final",
        "New Zealand and South Africa, who have each won the Rugby World Cup three times, meet in the final at "
        "the Stade de France in Saint-Denis. The winner will become the first nation to win the tournament "
        "four times.",
        "New Zealand beat Argentina 44-6 in their semi-final, while South Africa edged England 16-15. South "
        "Africa won a warm-up match between the two sides 35-7 at Twickenham in August.",
    ),
    "ballon-2023": (
        "the 2023 Ballon d'Or",
        "France Football's Ballon d'Or honours the best men's footballer of the 2022-23 season. Lionel Messi "
        "captained Argentina to victory at the 2022 World Cup in Qatar, and Erling Haaland scored 52 goals in "
        "all competitions in his first season at Manchester City, which won the treble.",
        "The ceremony takes place at the Théâtre du Châtelet in Paris. Messi and Haaland are widely seen as "
        "the two leading candidates, with Kylian Mbappé also among the thirty nominees.",
    ),
    "cwc-final-2023": (
        "the 2023 Cricket World Cup final",
        "India hosts the 2023 ICC Men's Cricket World Cup, whose final is played at the Narendra Modi Stadium "
        "in Ahmedabad. India won the tournament in 1983 and 2011, while Australia have won it a record five "
        "times. All ten teams played each other once in the group stage.",
        "Hosts India reached the final unbeaten, winning all ten of their matches, after beating New Zealand "
        "in the first semi-final in Mumbai. Australia beat South Africa by three wickets in the second "
        "semi-final in Kolkata.",
    ),
    "argentina-runoff": (
        "Argentina's presidential runoff",
        "In the first round of Argentina's presidential election on 22 October 2023, Economy Minister Sergio "
        "Massa of the governing Unión por la Patria came first with about 37% of the vote, ahead of "
        "libertarian economist Javier Milei of La Libertad Avanza with about 30%.",
        "Third-placed Patricia Bullrich and former president Mauricio Macri have endorsed Milei for the "
        "runoff. Opinion polls show a close race, and the two candidates met in a televised debate in the "
        "final week of the campaign.",
    ),
    "dutch-2023": (
        "the Dutch general election",
        "The Netherlands holds an early general election after Mark Rutte's fourth cabinet collapsed in July "
        "2023 over migration policy. Rutte is not standing again, and all 150 seats of the House of "
        "Representatives are at stake.",
        "Polls show a close race between the VVD under Dilan Yeşilgöz, the GroenLinks-PvdA alliance of Frans "
        "Timmermans, Pieter Omtzigt's new NSC party and Geert Wilders' PVV, which has risen in the final weeks "
        "of the campaign.",
    ),
    "sec-btc-etf": (
        "spot bitcoin exchange-traded products in the US",
        "Asset managers including BlackRock, Fidelity and Grayscale have applied to list spot bitcoin "
        "exchange-traded products in the United States. In August 2023 a federal appeals court ruled that the "
        "SEC had been wrong to reject Grayscale's request to convert its bitcoin trust into an ETF.",
        "Issuers have filed amended registration statements and announced their fees, and many analysts "
        "expect the SEC to decide on the pending applications within days.",
    ),
    "taiwan-2024": (
        "Taiwan's presidential election",
        "Taiwan votes for a successor to President Tsai Ing-wen, who is limited to two terms. The candidates "
        "are Vice President Lai Ching-te of the Democratic Progressive Party, New Taipei mayor Hou Yu-ih of "
        "the Kuomintang and former Taipei mayor Ko Wen-je of the Taiwan People's Party.",
        "Talks on a joint Kuomintang-Taiwan People's Party ticket collapsed in November 2023. Most opinion "
        "polls published before the blackout period showed Lai ahead of Hou.",
    ),
    "grammy-aoty-2024": (
        "Album of the Year at the 66th Grammy Awards",
        "Eight albums are nominated for Album of the Year at the 66th Annual Grammy Awards in Los Angeles, "
        "including Taylor Swift's Midnights, SZA's SOS, Olivia Rodrigo's Guts and Lana Del Rey's Did You Know "
        "That There's a Tunnel Under Ocean Blvd.",
        "SZA leads all artists with nine nominations. Taylor Swift has won Album of the Year three times, a "
        "record she shares with Frank Sinatra, Stevie Wonder and Paul Simon.",
    ),
    "oscars-bp-2024": (
        "Best Picture at the 96th Academy Awards",
        "Ten films are nominated for Best Picture at the 96th Academy Awards. Christopher Nolan's Oppenheimer "
        "leads with 13 nominations, followed by Poor Things with 11 and Killers of the Flower Moon with 10.",
        "Oppenheimer has won the top film prizes at the Golden Globes, the BAFTAs and the Producers Guild "
        "Awards, and its cast won the Screen Actors Guild ensemble award.",
    ),
    "oscars-3plus-2024": (
        "the 96th Academy Awards",
        "Oppenheimer leads the nominations for the 96th Academy Awards with 13, ahead of Poor Things with 11, "
        "Killers of the Flower Moon with 10 and Barbie with eight. The Zone of Interest has five nominations, "
        "including Best Picture and Best International Feature Film.",
        "Oppenheimer is the favourite in most of its categories after sweeping the guild awards. Emma Stone of "
        "Poor Things and Lily Gladstone of Killers of the Flower Moon are the leading contenders for Best "
        "Actress.",
    ),
    "boj-nirp": (
        "the Bank of Japan's negative interest rate policy",
        "The Bank of Japan has kept its short-term policy rate at -0.1% since 2016, the last negative policy "
        "rate among major central banks, and steers long-term yields with yield curve control. Governor Kazuo "
        "Ueda, in office since April 2023, has said an exit depends on sustainable inflation and wage growth.",
        "Japan's largest union federation, Rengo, reported in its first tally that this year's spring wage "
        "negotiations produced an average pay rise of 5.28%, the highest in 33 years. Several media reports "
        "say the BoJ is leaning toward ending negative rates at its March meeting.",
    ),
    "eurovision-2024": (
        "the Eurovision Song Contest 2024",
        "Malmö hosts the Eurovision Song Contest 2024 after Loreen's victory for Sweden in 2023. Thirty-seven "
        "countries take part, and the grand final is held at the Malmö Arena. The winner is decided by national "
        "juries and a public televote.",
        "Croatia's Baby Lasagna with Rim Tim Tagi Dim and Switzerland's Nemo with The Code lead the betting. "
        "Italy's Angelina Mango and Ukraine's Alyona Alyona and Jerry Heil are also among the fancied entries.",
    ),
    "mexico-2024": (
        "Mexico's presidential election",
        "Mexico elects a successor to President Andrés Manuel López Obrador, who is limited to a single "
        "six-year term. The main candidates are former Mexico City mayor Claudia Sheinbaum for the Morena-led "
        "coalition and senator Xóchitl Gálvez for the PAN-PRI-PRD alliance; Jorge Álvarez Máynez runs for "
        "Movimiento Ciudadano.",
        "Sheinbaum has led every major poll throughout the campaign, in most of them by more than 20 points. "
        "Either Sheinbaum or Gálvez would become Mexico's first woman president.",
    ),
    "bjp-majority": (
        "India's Lok Sabha election",
        "India's general election is held in seven phases, with about 970 million registered voters choosing "
        "the 543 members of the Lok Sabha. Prime Minister Narendra Modi's Bharatiya Janata Party won 303 "
        "seats in 2019 and 282 in 2014, a majority on its own both times.",
        "Exit polls published after the final phase of voting predict a large majority for the BJP-led "
        "National Democratic Alliance, with several projecting more than 350 seats for the alliance.",
    ),
    "ecb-2024-06": (
        "the ECB's June 2024 monetary policy meeting",
        "The European Central Bank has kept its deposit facility rate at a record 4.00% since September 2023. "
        "Euro-area inflation fell to 2.4% in March 2024, and in April the Governing Council said it would be "
        "appropriate to reduce rates if its confidence in the inflation outlook increased further.",
        "Several Governing Council members have publicly backed a first cut in June, and markets price a "
        "quarter-point reduction as highly likely, even though euro-area inflation edged up to 2.6% in May.",
    ),
    "inside-out-2": (
        "Inside Out 2's opening weekend",
        "Disney and Pixar release Inside Out 2, the sequel to the 2015 film Inside Out, in North American "
        "cinemas. The original opened to about $90 million domestically and grossed more than $850 million "
        "worldwide.",
        "Pre-release tracking has pointed to an opening of around $80-90 million, which would be the biggest "
        "of the year so far; Dune: Part Two currently holds that mark with $82.5 million.",
    ),
    "uk-cpi-may-2024": (
        "UK inflation for May 2024",
        "UK consumer price inflation peaked at 11.1% in October 2022. The Office for National Statistics "
        "reported that the annual CPI rate fell to 2.3% in April 2024 from 3.2% in March, as lower energy "
        "prices took effect.",
        "Economists expect the May figure to show inflation at or close to the Bank of England's 2% target. "
        "The Bank's Monetary Policy Committee meets the day after the release.",
    ),
    "uk-2024": (
        "the 2024 UK general election",
        "Prime Minister Rishi Sunak has called a general election for all 650 seats in the House of Commons, "
        "with 326 needed for a majority. The Conservatives have governed since 2010; Labour is led by Keir "
        "Starmer, and Reform UK by Nigel Farage, who is standing in Clacton.",
        "Opinion polls have shown Labour about twenty points ahead of the Conservatives throughout the "
        "campaign, and seat projections point to a large Labour majority. Reform UK has polled in the "
        "mid-teens.",
    ),
    "uk-10seats-2024": (
        "the 2024 UK general election",
        "Voters elect all 650 members of the House of Commons under first-past-the-post. At the 2019 election "
        "the Conservatives won 365 seats, Labour 202, the Scottish National Party 48 and the Liberal Democrats "
        "11, while the Greens held one seat.",
        "Polls suggest the SNP will lose many of its Scottish seats, mostly to Labour, and that the Liberal "
        "Democrats will gain Conservative-held seats in southern England. Under first-past-the-post, Reform "
        "UK's national vote share may translate into only a handful of seats.",
    ),
    "euro-sf-2024": (
        "UEFA Euro 2024",
        "Germany hosts UEFA Euro 2024 with 24 teams. Spain, France, England and the hosts are among the "
        "favourites, while Italy are the defending champions. The top two of each of the six groups and the four "
        "best third-placed teams advance to the round of 16.",
        "The quarter-final line-up is set: Spain play Germany and Portugal meet France, while England face "
        "Switzerland and the Netherlands play Turkey. Defending champions Italy were eliminated by Switzerland "
        "in the round of 16.",
    ),
    "france-2024": (
        "France's snap legislative election",
        "President Emmanuel Macron dissolved the National Assembly after his camp's heavy defeat by the "
        "National Rally in the European Parliament election in June 2024. The 577 seats are filled in two "
        "rounds, and 289 are needed for an absolute majority.",
        "In the first round the National Rally and its allies led with about 33% of the vote, ahead of the "
        "left-wing New Popular Front with about 28% and Macron's Ensemble with about 20%. More than 200 "
        "candidates who qualified for the second round have since withdrawn to block the National Rally.",
    ),
    "us-cpi-jun-2024": (
        "US consumer prices for June 2024",
        "US consumer price inflation peaked at 9.1% in June 2022. According to the Bureau of Labor Statistics, "
        "the all-items CPI rose 3.3% in the twelve months to May 2024, down from 3.4% in April, and was "
        "unchanged on the month.",
        "Economists expect a further slowdown in annual inflation in June, helped by lower gasoline prices. "
        "The report is watched for signs that the Federal Reserve could begin cutting rates later in the year.",
    ),
    "euro-final-2024": (
        "the UEFA Euro 2024 final",
        "Spain and England meet in the final of UEFA Euro 2024 at the Olympiastadion in Berlin. Spain have won "
        "the European Championship three times, most recently in 2012, while England are seeking their first "
        "major men's title since the 1966 World Cup.",
        "Spain have won all six of their matches at the tournament, including victories over Italy, Germany "
        "and France. England reached the final by beating the Netherlands 2-1 in Dortmund with a late winner "
        "from Ollie Watkins.",
    ),
    "us-unemp-jul-2024": (
        "the US jobs report for July 2024",
        "The US unemployment rate has risen gradually from a low of 3.4% in April 2023 to 4.1% in June 2024, "
        "according to the Bureau of Labor Statistics. The Federal Reserve has held its policy rate at "
        "5.25-5.50% since July 2023.",
        "Forecasters expect payroll growth to slow and the unemployment rate to hold near 4.1%. A rise in the "
        "three-month average unemployment rate of half a point above its low of the previous year would "
        "trigger the Sahm rule recession indicator.",
    ),
    "paris-20gold": (
        "the Paris 2024 Olympic medal table",
        "Paris hosts the 2024 Summer Olympics, with 329 medal events. At Tokyo 2020 the United States topped "
        "the gold-medal count with 39, one more than China, followed by host Japan with 27.",
        "The United States and China are competing for first place in the gold-medal count in the final days "
        "of the Games, and host nation France is having one of its most successful Olympics.",
    ),
    "starliner-crew": (
        "Boeing's Starliner crewed flight test",
        "NASA astronauts Butch Wilmore and Suni Williams launched aboard Boeing's Starliner on its first "
        "crewed flight test in June 2024 and docked with the International Space Station. Several thrusters "
        "failed during the approach and the spacecraft developed helium leaks, so its return has been "
        "postponed while engineers investigate.",
        "NASA has said it will decide whether the crew returns on Starliner or on a SpaceX Crew Dragon, which "
        "would keep them on the station until early next year. Boeing maintains that Starliner can bring the "
        "astronauts home safely.",
    ),
    "fed-2024-09": (
        "the FOMC's September 2024 meeting",
        "The Federal Reserve has held the federal funds target range at 5.25-5.50%, a 23-year high, since July "
        "2023. Inflation has eased, with the PCE price index up 2.5% in the year to June 2024, and the "
        "unemployment rate rose to 4.3% in July.",
        "Chair Jerome Powell said at the Jackson Hole symposium in August that the time has come for policy "
        "to adjust. Markets are split between a quarter-point and a half-point cut.",
    ),
    "starship-flight5": (
        "Starship Flight 5",
        "SpaceX plans to attempt the first catch of a returning Super Heavy booster with the chopstick arms "
        "of the launch tower at Starbase, Texas, on Starship's fifth flight test. On Flight 4 in June 2024 "
        "the booster made a controlled splashdown in the Gulf of Mexico.",
        "SpaceX has said the catch will only be attempted if conditions on the booster and the tower are "
        "right; otherwise the booster will divert to a splashdown offshore. The company is awaiting a launch "
        "licence from the Federal Aviation Administration.",
    ),
    "nobel-2024": (
        "the 2024 Nobel Prizes",
        "The 2024 Nobel Prizes are announced over about a week in October, beginning with physiology or "
        "medicine and ending with the prize in economic sciences. Each prize is worth 11 million Swedish "
        "kronor and may be shared by up to three laureates.",
        "Bookmakers' odds and Clarivate's list of highly cited researchers are watched closely; Can Xue and "
        "Gerald Murnane are among the writers most often tipped for the literature prize.",
    ),
    "ballon-2024": (
        "the 2024 Ballon d'Or",
        "The 2024 Ballon d'Or covers the 2023-24 season. Real Madrid's Vinícius Júnior and Jude Bellingham won "
        "La Liga and the Champions League, while Rodri won the Premier League with Manchester City and was "
        "named player of the tournament as Spain won Euro 2024.",
        "Vinícius Júnior has been widely regarded as the favourite, with Rodri and Bellingham as his closest "
        "challengers among the thirty nominees.",
    ),
    "us-senate-2024": (
        "the 2024 US Senate elections",
        "Thirty-four Senate seats are contested in November 2024. Democrats and the independents who caucus "
        "with them hold a 51-49 majority, and Democrats are defending seats in Montana and Ohio, states that "
        "Donald Trump won in 2020. In West Virginia, independent Joe Manchin is retiring.",
        "Republicans are strongly favoured to gain West Virginia, and forecasters see Montana, Ohio, "
        "Pennsylvania, Michigan and Wisconsin as among the closest contests.",
    ),
    "us-pres-2024": (
        "the 2024 US presidential election",
        "Vice President Kamala Harris became the Democratic nominee after President Joe Biden withdrew from "
        "the race in July 2024. She faces former President Donald Trump, the Republican nominee; 270 of the "
        "538 electoral votes are needed to win.",
        "National and swing-state polls show an extremely close race. Pennsylvania, Michigan, Wisconsin, "
        "Georgia, North Carolina, Arizona and Nevada are seen as the decisive battleground states.",
    ),
    "btc-100k": (
        "bitcoin's price",
        "Bitcoin passed its previous all-time high of about $69,000 in March 2024, helped by inflows into the "
        "new US spot bitcoin exchange-traded funds. The fourth halving of the block reward took place in "
        "April 2024.",
        "The price rose sharply after the US presidential election and came close to $100,000 in late "
        "November before pulling back. Traders regard the round number as a key psychological level.",
    ),
    "f1-top3-2024": (
        "the 2024 Formula One drivers' championship",
        "Max Verstappen won seven of the first ten races of the 2024 season for Red Bull, but McLaren's car "
        "became the fastest in the second half of the year. Lando Norris and Oscar Piastri of McLaren and "
        "Charles Leclerc and Carlos Sainz of Ferrari have all won races this season.",
        "Verstappen secured his fourth consecutive title at the Las Vegas Grand Prix. With one race left, "
        "Norris and Leclerc are separated by a handful of points in the fight for second place, with Piastri "
        "further back.",
    ),
    "wcc-2024": (
        "the 2024 World Chess Championship",
        "Defending champion Ding Liren of China plays 18-year-old Gukesh Dommaraju of India, winner of the "
        "2024 Candidates Tournament, in a 14-game match in Singapore. The first player to reach 7.5 points "
        "wins; a 7-7 tie leads to rapid and blitz tie-breaks.",
        "Gukesh, the youngest challenger in the title's history, is rated higher than Ding, who has played "
        "little classical chess since winning the title in 2023. The match has been closely fought since its "
        "first game in late November.",
    ),
    "fed-2025-01": (
        "the FOMC's January 2025 meeting",
        "The Federal Reserve cut the federal funds target range by a full percentage point over the last four "
        "months of 2024, to 4.25-4.50% in December. Its December projections signalled fewer cuts in 2025 "
        "than it had expected earlier.",
        "Futures markets see almost no chance of a cut at the January meeting, and most economists expect the "
        "Committee to hold rates while it assesses inflation and the new administration's policies.",
    ),
    "grammy-aoty-2025": (
        "Album of the Year at the 67th Grammy Awards",
        "Eight albums are nominated for Album of the Year at the 67th Annual Grammy Awards, including "
        "Beyoncé's Cowboy Carter, Charli XCX's Brat, Billie Eilish's Hit Me Hard and Soft, Sabrina "
        "Carpenter's Short n' Sweet and Taylor Swift's The Tortured Poets Department.",
        "Beyoncé leads all nominees with eleven nominations and is the most nominated artist in Grammy "
        "history, but she has never won Album of the Year. The ceremony in Los Angeles also raises money for "
        "victims of the January wildfires.",
    ),
    "sb-lix": (
        "Super Bowl LIX",
        "The Kansas City Chiefs, winners of the last two Super Bowls, face the Philadelphia Eagles at the "
        "Caesars Superdome in New Orleans in a rematch of Super Bowl LVII. Kansas City are trying to become "
        "the first team to win three Super Bowls in a row.",
        "The Chiefs finished the regular season 15-2 and the Eagles 14-3. Philadelphia running back Saquon "
        "Barkley rushed for more than 2,000 yards in the regular season.",
    ),
    "rba-2025-02": (
        "the Reserve Bank of Australia's February 2025 decision",
        "The Reserve Bank of Australia has held its cash rate target at 4.35% since November 2023, while most "
        "other advanced-economy central banks began cutting in 2024. The February meeting is the board's "
        "first of the year.",
        "Underlying inflation slowed more than expected in the December quarter, with the trimmed mean at "
        "3.2% over the year, and markets now price a quarter-point cut as highly likely.",
    ),
    "german-5pct-2025": (
        "Germany's snap federal election",
        "Germany holds an early federal election after Chancellor Olaf Scholz's coalition of the SPD, Greens "
        "and FDP collapsed in November 2024 and he lost a confidence vote in December. Parties need 5% of the "
        "second vote, or three constituency seats, to enter the Bundestag on proportional terms.",
        "Polls put Friedrich Merz's CDU/CSU first at around 30%, followed by the AfD at around 20%, the SPD "
        "at around 15% and the Greens at around 13%. Die Linke has risen in recent polls, while the FDP and "
        "the BSW hover near the 5% threshold.",
    ),
    "oscars-2plus-2025": (
        "the 97th Academy Awards",
        "Emilia Pérez leads the nominations for the 97th Academy Awards with 13, followed by The Brutalist and "
        "Wicked with 10 each and A Complete Unknown and Conclave with eight. Anora has six nominations and "
        "Dune: Part Two five.",
        "Anora won the top prizes of the Producers Guild and the Directors Guild, while Conclave won Best Film "
        "at the BAFTAs and the Screen Actors Guild ensemble award. Adrien Brody of The Brutalist and Timothée "
        "Chalamet of A Complete Unknown are the leading contenders for Best Actor.",
    ),
    "switch2-price": (
        "Nintendo Switch 2 pricing",
        "Nintendo revealed the Switch 2, the successor to the Nintendo Switch, in a short video in January "
        "2025 without giving a price or release date. The original Switch launched in 2017 at $299.99 in the "
        "United States.",
        "Nintendo has scheduled a Nintendo Direct presentation dedicated to the Switch 2, where pricing is "
        "expected. Analysts' estimates for the US price mostly range from about $400 to $450.",
    ),
    "minecraft-opening": (
        "A Minecraft Movie's opening weekend",
        "Warner Bros. and Legendary release A Minecraft Movie, a live-action adaptation of the best-selling "
        "video game directed by Jared Hess and starring Jack Black and Jason Momoa, in North American cinemas "
        "in early April 2025.",
        "Pre-release tracking suggests a strong opening. The biggest domestic opening of 2025 so far belongs "
        "to Captain America: Brave New World, with about $89 million over three days.",
    ),
    "us-gdp-q1-2025": (
        "US GDP for the first quarter of 2025",
        "The US economy grew at an annualized rate of 2.4% in the fourth quarter of 2024, according to the "
        "Bureau of Economic Analysis. Since then, businesses and consumers have rushed to buy imports ahead of "
        "new tariffs announced by the Trump administration.",
        "The Atlanta Fed's GDPNow model has pointed to a contraction in the first quarter, largely because of "
        "the surge in imports, while most private forecasters expect weak but slightly positive growth.",
    ),
    "conclave-second-day": (
        "the 2025 papal conclave",
        "Pope Francis died on 21 April 2025 at the age of 88. The cardinal electors, those under 80, will meet "
        "in the Sistine Chapel to elect his successor by a two-thirds majority, with up to four ballots a day.",
        "A record 133 cardinal electors are due to take part. The last two conclaves, in 2005 and 2013, "
        "elected a pope on their second day of voting.",
    ),
    "pope-2025": (
        "the 2025 papal conclave",
        "Pope Francis, the first pope from the Americas, died on 21 April 2025 after a pontificate of twelve "
        "years. The cardinals under 80 gather in the Sistine Chapel to elect his successor, who needs a "
        "two-thirds majority of the votes.",
        "Names frequently mentioned include Secretary of State Pietro Parolin, Luis Antonio Tagle of the "
        "Philippines, Matteo Zuppi of Bologna and Péter Erdő of Budapest.",
    ),
    "eurovision-2025": (
        "the Eurovision Song Contest 2025",
        "Basel hosts the Eurovision Song Contest 2025 after Nemo's victory for Switzerland in 2024. Twenty-six "
        "acts compete in the grand final at the St. Jakobshalle, and the result combines national jury votes with "
        "a public televote.",
        "Sweden's KAJ with Bara bada bastu lead the betting, with Austria's JJ and his song Wasted Love among "
        "the main contenders. France, the Netherlands and Israel are also highly placed in the odds.",
    ),
    "poland-2025": (
        "Poland's presidential runoff",
        "No candidate won a majority in the first round of Poland's presidential election on 18 May 2025. "
        "Warsaw mayor Rafał Trzaskowski of the governing Civic Coalition took 31.4% and Karol Nawrocki, the "
        "historian backed by Law and Justice, 29.5%.",
        "Sławomir Mentzen, who came third with 14.8%, has not endorsed either finalist, and polls show a very "
        "close race.",
    ),
    "nba-2025": (
        "the 2025 NBA Finals",
        "The Oklahoma City Thunder, who had the league's best regular-season record at 68-14, face the Indiana "
        "Pacers in the 2025 NBA Finals. Thunder guard Shai Gilgeous-Alexander was named the regular season's "
        "Most Valuable Player.",
        "The series has been closely contested, and Oklahoma City hold home advantage for a potential deciding "
        "game. Indiana, led by Tyrese Haliburton, are seeking their first NBA championship.",
    ),
    "ecb-2025-07": (
        "the ECB's July 2025 monetary policy meeting",
        "The European Central Bank has cut its deposit facility rate eight times since June 2024, most "
        "recently by a quarter point to 2.00% in June 2025. Euro-area inflation was 2.0% in June, in line with "
        "the ECB's target.",
        "President Christine Lagarde has said the ECB is in a good position after its June cut, and markets "
        "expect a pause at the July meeting while trade talks between the EU and the United States continue.",
    ),
    "gpt5": (
        "OpenAI's GPT-5",
        "OpenAI released GPT-4 in March 2023 and has since launched GPT-4o, the o-series reasoning models and "
        "GPT-4.5. In February 2025 chief executive Sam Altman said that GPT-5 would unify the GPT and o-series "
        "models into a single system.",
        "Altman has said in recent interviews that GPT-5 is coming soon, and press reports suggest a summer "
        "launch, but OpenAI has not announced a date. Google and Anthropic have released new frontier models "
        "this year.",
    ),
    "ballon-2025": (
        "the 2025 Ballon d'Or",
        "The 2025 Ballon d'Or covers the 2024-25 season. Paris Saint-Germain won Ligue 1, the Coupe de France "
        "and their first Champions League title, beating Inter 5-0 in the final, while Barcelona won La Liga "
        "and the Copa del Rey.",
        "PSG forward Ousmane Dembélé and Barcelona's 18-year-old Lamine Yamal are seen as the leading "
        "candidates, with Vitinha, Raphinha and Mohamed Salah also among the thirty nominees.",
    ),
    "ldp-2025": (
        "the LDP presidential election",
        "Prime Minister Shigeru Ishiba announced his resignation as leader of Japan's Liberal Democratic Party "
        "in September 2025 after the ruling coalition lost its majority in the upper house election in July. "
        "The winner of the party vote is expected to become prime minister.",
        "Five candidates are standing: Sanae Takaichi, Shinjiro Koizumi, Yoshimasa Hayashi, Toshimitsu Motegi "
        "and Takayuki Kobayashi. Polls of party members favour Takaichi and Koizumi, and a runoff between the "
        "top two is widely expected.",
    ),
    "nobel-peace-trump": (
        "the 2025 Nobel Peace Prize",
        "The Norwegian Nobel Committee received 338 nominations for the 2025 Nobel Peace Prize, 244 "
        "individuals and 94 organisations. US President Donald Trump has said repeatedly that he deserves the "
        "prize, and several governments have announced that they nominated him.",
        "Nobel historians and commentators regard a Trump win as unlikely, noting that the committee tends to "
        "reward long-term work for peace and international cooperation.",
    ),
    "ws-2025": (
        "the 2025 World Series",
        "The Los Angeles Dodgers, the defending champions, face the Toronto Blue Jays in the 2025 World "
        "Series. Toronto, the American League's top seed, are playing in the World Series for the first time "
        "since they won it in 1993.",
        "Shohei Ohtani, Yoshinobu Yamamoto and Blake Snell lead the Dodgers, while the Blue Jays rely on "
        "Vladimir Guerrero Jr. and a deep lineup. The series opened in Toronto.",
    ),
    "f1-2025": (
        "the 2025 Formula One drivers' championship",
        "McLaren drivers Lando Norris and Oscar Piastri have fought for the 2025 title with Red Bull's Max "
        "Verstappen, the champion of the last four seasons. McLaren secured the constructors' championship in "
        "October.",
        "Before the final race in Abu Dhabi, Norris leads with 408 points, ahead of Verstappen on 396 and "
        "Piastri on 392. A podium finish would guarantee Norris the title.",
    ),
    "fed-cuts-2025": (
        "the Federal Reserve's 2025 rate decisions",
        "The Federal Open Market Committee holds eight scheduled meetings a year. It kept the target range at "
        "4.25-4.50% at each of its first five meetings of 2025, then cut by a quarter point in September and "
        "again in October, to 3.75-4.00%.",
        "Officials are divided over a further cut at the final meeting of the year, and the government "
        "shutdown delayed several economic data releases. Futures markets price a December cut as likely.",
    ),
    "fed-2026-01": (
        "the FOMC's January 2026 meeting",
        "The Federal Reserve cut the federal funds target range three times in the final months of 2025, "
        "bringing it to 3.50-3.75% in December. The December decision drew three dissents, and inflation remains "
        "above the Committee's 2% objective.",
        "Markets widely expect the Committee to leave rates unchanged at its January meeting, though Governor "
        "Stephen Miran has argued for faster cuts.",
    ),
    "ao-2026": (
        "the 2026 Australian Open men's singles",
        "Jannik Sinner won the Australian Open in 2024 and 2025. World number one Carlos Alcaraz, a six-time "
        "Grand Slam champion, has never won the tournament, while Novak Djokovic has won it a record ten times.",
        "Alcaraz is chasing a career Grand Slam in Melbourne, while Djokovic, at 38, is seeking a record 25th "
        "major singles title. Jannik Sinner, the two-time defending champion, is also in the draw.",
    ),
    "sb-lx": (
        "Super Bowl LX",
        "The Seattle Seahawks and the New England Patriots meet in Super Bowl LX at Levi's Stadium in Santa "
        "Clara, California, a rematch of Super Bowl XLIX. Both teams finished the regular season 14-3, and the "
        "Patriots are seeking a record seventh Super Bowl title.",
        "The Seahawks, led by quarterback Sam Darnold and coach Mike Macdonald, are favoured by about four and "
        "a half points. New England's Drake Maye is in his second season, and Mike Vrabel in his first as the "
        "Patriots' head coach.",
    ),
    "milano-12gold": (
        "the Milano Cortina 2026 medal table",
        "Milan and Cortina d'Ampezzo host the 2026 Winter Olympics, with a record 116 medal events. Norway "
        "topped the gold-medal count at Beijing 2022 with 16 golds, ahead of Germany with 12.",
        "Norway has led the gold-medal table for most of the Games, with cross-country skier Johannes Høsflot "
        "Klæbo becoming the most successful Winter Olympian in history. The United States and host Italy are "
        "chasing record hauls.",
    ),
    "oscars-bp-2026": (
        "Best Picture at the 98th Academy Awards",
        "Sinners leads the nominations for the 98th Academy Awards with a record 16, followed by One Battle "
        "After Another with 13 and Frankenstein with nine. Ten films are nominated for Best Picture.",
        "One Battle After Another won the Directors Guild Award for Paul Thomas Anderson and is regarded as "
        "the Best Picture frontrunner, with Sinners its closest rival.",
    ),
    "oscars-3plus-2026": (
        "the 98th Academy Awards",
        "Sinners has a record 16 nominations for the 98th Academy Awards, One Battle After Another 13 and "
        "Frankenstein nine. A new category, Best Casting, is presented for the first time at the ceremony in the "
        "Dolby Theatre in Hollywood.",
        "Frankenstein is favoured in several craft categories, and KPop Demon Hunters is the favourite for "
        "Best Animated Feature. Conan O'Brien hosts the ceremony for the second year running.",
    ),
    "fed-2026-03": (
        "the FOMC's March 2026 meeting",
        "The Federal Reserve held the federal funds target range at 3.50-3.75% in January 2026, with Governors "
        "Stephen Miran and Christopher Waller dissenting in favour of a cut. The Committee publishes new "
        "economic projections at its March meeting.",
        "Rising energy prices linked to the conflict in the Middle East have pushed up inflation expectations, "
        "and markets expect the Committee to hold rates steady.",
    ),
    "hungary-2026": (
        "Hungary's parliamentary election",
        "Viktor Orbán's Fidesz-KDNP alliance has governed Hungary since 2010 and won two-thirds majorities in "
        "four consecutive elections. The 199-seat National Assembly is elected through 106 single-member "
        "constituencies and national party lists.",
        "Péter Magyar's Tisza party, which emerged as a political force in 2024, has led most independent "
        "opinion polls for more than a year.",
    ),
}


def _load_sample_module():
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE_DIR / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _long_date(day: dt.date) -> str:
    return f"{day.day} {day:%B %Y}"


def _stale_date(day: dt.date, index: int) -> str:
    return day.strftime(STALE_DATE_FORMATS[index % len(STALE_DATE_FORMATS)].replace("{day}", str(day.day)))


def _heading(topic: str) -> str:
    return topic[0].upper() + topic[1:]


def _choices_sentence(item: dict) -> str:
    if item["question_type"] == "yes_no":
        return ""
    return f"The possible outcomes are: {'; '.join(item['options'])}. "


def _doc(qid: str, slug: str, kind: str, title: str, published: dt.date | None, content: str) -> dict:
    if not CONTENT_CHARS[0] <= len(content) <= CONTENT_CHARS[1]:
        raise ValueError(f"archive doc {slug}/{kind}: content has {len(content)} chars, rule is {CONTENT_CHARS}")
    stamp = published.isoformat() if published else None
    return {
        "doc_id": f"{qid}-{kind}",
        "url": f"{URL_ROOT}/{stamp or 'undated'}/{slug}-{kind}",
        "title": title,
        "published_date": stamp,
        "content": content,
    }


def question_docs(item: dict, qid: str, index: int) -> list[dict]:
    """The archive documents of one sample question (``index`` varies the optional kinds)."""
    slug = item["slug"]
    topic, context, outlook = FACTS[slug]
    heading = _heading(topic)
    tau = dt.date.fromisoformat(item["end_time"])
    note = item["resolution_note"]
    background_day = tau - dt.timedelta(days=BACKGROUND_DAYS_OVERRIDE.get(slug, BACKGROUND_DAYS))
    preview_day = tau - dt.timedelta(days=PREVIEW_DAYS_OVERRIDE.get(slug, PREVIEW_DAYS))
    docs = [
        _doc(qid, slug, "background", f"{heading}: background", background_day,
             f"What to know about {topic}. {context} "
             f"This explainer reflects information available on {_long_date(background_day)}."),
        _doc(qid, slug, "preview", f"{heading}: the outlook", preview_day,
             f"{outlook} {_choices_sentence(item)}{context}"),
        _doc(qid, slug, "result", f"{heading}: the outcome", tau,
             f"{note} {context} This report was filed on {_long_date(tau)}."),
    ]  # fmt: skip
    if index % 2 == 0:
        recap_day = tau + dt.timedelta(days=RECAP_DAYS)
        docs.append(_doc(qid, slug, "recap", f"{heading}: looking back", recap_day,
                         f"Looking back at {topic}. {note} Beforehand, the picture was this: {outlook}"))
    if slug in STALE_SLUGS:
        # Dated before the cutoff, but the page was updated after the outcome (republication).
        updated = _stale_date(tau + dt.timedelta(days=1), STALE_SLUGS.index(slug))
        docs.append(_doc(qid, slug, "stale", f"{heading}: what to know", tau - dt.timedelta(days=STALE_DAYS),
                         f"{context} Updated {updated}: {note}"))
    if slug in UNDATED_BACKGROUND_SLUGS:
        docs.append(_doc(qid, slug, "undated", f"{heading}: explainer", None, f"{context} {outlook}"))
    if slug in UNDATED_OUTCOME_SLUGS:
        docs.append(_doc(qid, slug, "undated", f"{heading}: results page", None, f"{note} {context}"))
    return docs


def archive_docs() -> list[dict]:
    sample = _load_sample_module()
    missing = sorted({item["slug"] for item in sample.QUESTIONS} - set(FACTS))
    if missing:
        raise ValueError(f"make_archive: no FACTS for sample question(s) {missing}")
    items = sorted(sample.QUESTIONS, key=lambda item: (item["end_time"], sample.question_id(item["event"])))
    docs = [doc for i, item in enumerate(items) for doc in question_docs(item, sample.question_id(item["event"]), i)]
    return sorted(docs, key=lambda doc: (doc["published_date"] or "", doc["doc_id"]))


def main() -> None:
    docs = archive_docs()
    text = "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)
    OUT_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(docs)} documents ({len(text.encode('utf-8'))} bytes) to {OUT_PATH}")


if __name__ == "__main__":
    main()
